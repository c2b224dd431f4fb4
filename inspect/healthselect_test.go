package inspect

import (
	"regexp"
	"slices"
	"testing"
)

func TestSelectHealth(t *testing.T) {
	t.Parallel()
	all := []GroupHealth{
		{Group: "orders", State: HealthRewind, Conditions: []string{HealthRewind, HealthStop}},
		{Group: "payments", State: HealthOK, Conditions: []string{HealthOK}},
		{Group: "audit", State: HealthStop, Conditions: []string{HealthStop}},
	}
	// Everything: counted per state and per active condition.
	s := SelectHealth(all, nil, nil)
	if len(s.Groups) != 3 || s.NotOK != 2 || len(s.Missing) != 0 {
		t.Fatalf("all: %d groups, %d not OK, missing %v", len(s.Groups), s.NotOK, s.Missing)
	}
	if s.States[HealthRewind] != 1 || s.States[HealthOK] != 1 || s.Conditions[HealthStop] != 2 {
		t.Errorf("all: states %v conditions %v", s.States, s.Conditions)
	}
	// By name, with one that was never evaluated.
	s = SelectHealth(all, []string{"payments", "ghost"}, nil)
	if len(s.Groups) != 1 || s.Groups[0].Group != "payments" || s.NotOK != 0 || !slices.Equal(s.Missing, []string{"ghost"}) {
		t.Errorf("by name: %+v", s)
	}
	// By regex: order kept, and a named group the regex drops is missing.
	s = SelectHealth(all, []string{"orders", "audit"}, regexp.MustCompile("^a"))
	if len(s.Groups) != 1 || s.Groups[0].Group != "audit" || !slices.Equal(s.Missing, []string{"orders"}) {
		t.Errorf("by regex: %+v", s)
	}
	// Nothing evaluated: empty, not nil (JSON shows [] and {}).
	s = SelectHealth(nil, nil, nil)
	if s.Groups == nil || s.States == nil || s.Conditions == nil {
		t.Errorf("empty selection has nil fields: %+v", s)
	}
}
