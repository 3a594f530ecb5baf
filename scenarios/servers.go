package scenarios

import (
	"context"
	"errors"
	"slices"
)

// runServers are the servers a run's configurations are on, by store
// name: each worker's own (Pooling), the run's shared (Sharing), the
// user's (Connecting). A store in none of them starts servers for each
// configuration.
type runServers struct {
	pools  map[string][]Servers
	shared map[string]Servers
	own    map[string]Servers
}

// of is what worker w's configuration of a lock of store runs on: nil for
// servers started for it alone.
func (s runServers) of(store string, w int) Servers {
	if p, ok := s.pools[store]; ok {
		return p[w]
	}
	if own, ok := s.own[store]; ok {
		return own // the user's, before any the run would share
	}
	return s.shared[store]
}

// preflightOn is what a preflight of a lock of store runs on: the first
// worker's servers, or the user's; nil for servers of its own.
func (s runServers) preflightOn(store string) Servers {
	if p, ok := s.pools[store]; ok {
		return p[0]
	}
	return s.own[store]
}

// close closes every server once.
func (s runServers) close() error {
	var all []Servers
	for _, p := range s.pools {
		all = append(all, p...)
	}
	for _, m := range []map[string]Servers{s.shared, s.own} {
		for _, sv := range m {
			all = append(all, sv)
		}
	}
	var errs []error
	for i, sv := range all {
		if sv != nil && !slices.Contains(all[:i], sv) { // the user's cluster is every worker's
			errs = append(errs, sv.Close())
		}
	}
	return errors.Join(errs...)
}

// openServers opens, for each store jobs have locks of, the servers its
// backend keeps for a run of workers workers: pools started at once, the
// user's reached, shared ones made ready (started when first asked for).
// If one fails, those opened are closed.
func openServers(ctx context.Context, cfg Config, jobs []job, workers int) (runServers, error) {
	s := runServers{pools: map[string][]Servers{}, shared: map[string]Servers{}, own: map[string]Servers{}}
	for _, b := range Backends() {
		name := b.Name()
		if !slices.ContainsFunc(jobs, func(j job) bool { return j.l.Kind.Name == name }) {
			continue
		}
		var err error
		if p, ok := b.(Pooling); ok {
			s.pools[name], err = p.Pool(ctx, cfg, workers)
		} else if c, ok := b.(Connecting); ok {
			var own Servers
			if own, err = c.Own(ctx, cfg); own != nil {
				s.own[name] = own
			}
		}
		if err != nil {
			s.close()
			return runServers{}, err
		}
		if sh, ok := b.(Sharing); ok {
			s.shared[name] = sh.Share()
		}
	}
	return s, nil
}
