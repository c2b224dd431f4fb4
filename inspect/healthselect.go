package inspect

import (
	"fmt"
	"regexp"
)

// HealthSelection is the groups 'groups health' reports out of what was
// evaluated: those asked for, counted by state and by condition.
type HealthSelection struct {
	Groups []GroupHealth
	// States counts the groups per worst condition; Conditions the groups
	// per active condition (a group counts once for each it has).
	States     map[string]int
	Conditions map[string]int
	// Missing are the groups asked for by name that were not evaluated.
	Missing []string
	// NotOK counts the selected groups whose state is not OK.
	NotOK int
}

// SelectHealth keeps the evaluated groups named in names (all when empty)
// whose id matches re (all when nil), in their order.
func SelectHealth(all []GroupHealth, names []string, re *regexp.Regexp) HealthSelection {
	sel := HealthSelection{Groups: []GroupHealth{}, States: map[string]int{}, Conditions: map[string]int{}}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	found := map[string]bool{}
	for _, h := range all {
		if len(want) > 0 && !want[h.Group] {
			continue
		}
		if re != nil && !re.MatchString(h.Group) {
			continue
		}
		found[h.Group] = true
		sel.Groups = append(sel.Groups, h)
		sel.States[h.State]++
		for _, c := range h.Conditions {
			sel.Conditions[c]++
		}
		if h.State != HealthOK {
			sel.NotOK++
		}
	}
	for _, n := range names {
		if !found[n] {
			sel.Missing = append(sel.Missing, n)
		}
	}
	return sel
}

// HealthCoverage is which groups an evaluation covers: an exporter
// observes the groups matching its --group-regex, the first MaxGroups of
// them by id (up to LastObserved); Dropped is how many matched beyond.
type HealthCoverage struct {
	GroupRegex   string `json:"groupRegex,omitempty"`
	MaxGroups    int    `json:"maxGroups,omitempty"`
	Dropped      int    `json:"dropped"`
	LastObserved string `json:"lastObserved,omitempty"`
}

// WhyMissing says why group is not in an evaluation with coverage c.
func (c HealthCoverage) WhyMissing(group string) string {
	if c.GroupRegex != "" {
		if re, err := regexp.Compile(c.GroupRegex); err == nil && !re.MatchString(group) {
			return fmt.Sprintf("left out by --group-regex %q", c.GroupRegex)
		}
	}
	if c.Dropped > 0 && group > c.LastObserved {
		return fmt.Sprintf("left out by --max-groups %d: %d matching groups beyond it are not observed (it observes the first by id, up to %q)", c.MaxGroups, c.Dropped, c.LastObserved)
	}
	if IsCanary(group) {
		return "a probe canary: left out of every evaluation"
	}
	return "no offset file, entry or broker listing"
}
