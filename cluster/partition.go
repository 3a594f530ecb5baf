package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Partition splits the members into groups that cannot reach each other in
// either direction. Members not named in any group form one more group
// together, so Partition([]string{"m1"}) isolates m1. The cut replaces any
// partition in force and holds across member restarts until Heal.
//
// It uses etcd's own peer transport switch (CutPeer on both sides of each
// pair): a proxy in front of a member only sees who connects to it, so it
// could cut one direction only.
func (c *Cluster) Partition(groups ...[]string) error {
	if c.IsExternal() {
		return fmt.Errorf("partition: %w", ErrExternal)
	}
	if err := c.checkOpen(); err != nil {
		return err
	}
	full, err := c.completeGroups(groups)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.partition = full
	c.mu.Unlock()
	c.mendAll()
	c.applyPartition(full, nil)
	return nil
}

// Heal removes every peer cut.
func (c *Cluster) Heal() error {
	if c.IsExternal() {
		return fmt.Errorf("heal: %w", ErrExternal)
	}
	c.mu.Lock()
	c.partition = nil
	c.mu.Unlock()
	c.mendAll()
	return nil
}

// PartitionString describes the partition in force, "m1 | m2 m3", or "" when
// the members can all reach each other.
func (c *Cluster) PartitionString() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return formatGroups(c.partition)
}

func formatGroups(groups [][]string) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(g, " ")
	}
	return strings.Join(parts, " | ")
}

// completeGroups validates groups and adds the group of unnamed members.
func (c *Cluster) completeGroups(groups [][]string) ([][]string, error) {
	seen := map[string]bool{}
	var full [][]string
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		for _, name := range g {
			if _, err := c.member(name); err != nil {
				return nil, fmt.Errorf("partition: %w", err)
			}
			if seen[name] {
				return nil, fmt.Errorf("partition: member %s is in two groups", name)
			}
			seen[name] = true
		}
		full = append(full, slices.Clone(g))
	}
	var rest []string
	for _, m := range c.members {
		if !seen[m.name] {
			rest = append(rest, m.name)
		}
	}
	if len(rest) > 0 {
		full = append(full, rest)
	}
	if len(full) < 2 {
		return nil, fmt.Errorf("partition: %s leaves every member in one group", formatGroups(full))
	}
	return full, nil
}

// peerLink is member on's link to member to, on on's side.
type peerLink struct{ on, to string }

// applyPartition cuts every pair of members in different groups, on the side
// of each running member; with only set, just the pairs that involve only.
// A link cut already is left as it is: etcd's CutPeer and MendPeer must
// alternate (see Cluster.cut).
func (c *Cluster) applyPartition(groups [][]string, only *member) {
	group := map[string]int{}
	for i, g := range groups {
		for _, name := range g {
			group[name] = i
		}
	}
	for _, a := range c.members {
		for _, b := range c.members {
			if a == b || group[a.name] == group[b.name] {
				continue
			}
			if only != nil && a != only && b != only {
				continue
			}
			e, err := a.server()
			if err != nil || !c.markCut(peerLink{a.name, b.name}) {
				continue
			}
			e.Server.CutPeer(b.peerID())
		}
	}
}

// markCut records link as cut, and reports whether it was not already.
func (c *Cluster) markCut(link peerLink) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut[link] {
		return false
	}
	if c.cut == nil {
		c.cut = map[peerLink]bool{}
	}
	c.cut[link] = true
	return true
}

// mendAll mends every link cut, on the side of each member still running
// the server that cut it.
func (c *Cluster) mendAll() {
	c.mu.Lock()
	cut := c.cut
	c.cut = nil
	c.mu.Unlock()
	for link := range cut {
		a, err := c.member(link.on)
		if err != nil {
			continue
		}
		b, err := c.member(link.to)
		if err != nil {
			continue
		}
		if e, err := a.server(); err == nil {
			e.Server.MendPeer(b.peerID())
		}
	}
}

// forgetCuts forgets the links cut on member name's side: its server
// stopped, and the one it starts again cuts nothing until told.
func (c *Cluster) forgetCuts(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for link := range c.cut {
		if link.on == name {
			delete(c.cut, link)
		}
	}
}

// inMajority reports whether name's group holds a majority of the members.
func (c *Cluster) inMajority(groups [][]string, name string) bool {
	for _, g := range groups {
		if slices.Contains(g, name) {
			return len(g) > len(c.members)/2
		}
	}
	return true
}
