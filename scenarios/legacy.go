package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The lease scale was once written "ttl", though it is a factor and a TTL
// is in seconds: a schedule or results file written then still reads, its
// "ttl" taken for "lease_scale". Both read strictly (no unknown field), as
// their readers ask.

// UnmarshalJSON reads a schedule (see Plan.LeaseScale).
func (p *Plan) UnmarshalJSON(b []byte) error {
	type plain Plan
	var v plain
	err := readScaled(b, &v, &v.LeaseScale)
	*p = Plan(v)
	return err
}

// UnmarshalJSON reads a campaign (see Campaign.LeaseScale).
func (c *Campaign) UnmarshalJSON(b []byte) error {
	type plain Campaign
	var v plain
	err := readScaled(b, &v, &v.LeaseScale)
	*c = Campaign(v)
	return err
}

// readScaled decodes the object b into v, strictly, and an old "ttl" of
// it into scale (v's lease scale) when b has no "lease_scale".
func readScaled(b []byte, v any, scale *int) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	old, hasOld := fields["ttl"]
	delete(fields, "ttl")
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, hasNew := fields["lease_scale"]; hasOld && !hasNew {
		if err := json.Unmarshal(old, scale); err != nil {
			return fmt.Errorf("ttl: %w", err)
		}
	}
	return nil
}
