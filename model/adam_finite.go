package model

// NonFiniteMoment names the first node whose first or second moment holds
// NaN or ±Inf ("first" or "second"), or returns "", "" when every moment
// is finite: a gradient whose square overflows leaves the second moment
// +Inf while the weight stays finite (its update is 0). One pass over the
// moments (the vectorised check Adam makes of every gradient), for a
// checkpoint's writer, never part of a step: UnmarshalBinary refuses such
// a state, so a checkpoint that holds one could not be resumed.
func (a *Adam) NonFiniteMoment() (node, moment string) {
	for i, n := range a.nodes {
		for _, mv := range []struct {
			x    any
			name string
		}{{a.m[i], "first"}, {a.v[i], "second"}} {
			bad := false
			switch x := mv.x.(type) {
			case []float32:
				bad = anyNonFinite(x)
			case []float64:
				bad = anyNonFinite(x)
			}
			if bad {
				return n.Name(), mv.name
			}
		}
	}
	return "", ""
}
