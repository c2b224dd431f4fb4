package inspect

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// CanaryPrefix starts the id of every canary group 'kaasctl probe' and
// 'kaasctl exporter --probe' commit to: "__kaasctl-canary-<broker>-<n>".
// Listings, group metrics, health and alerts leave such groups out; their
// offset files are the only thing the probe writes.
const CanaryPrefix = "__kaasctl-canary-"

// IsCanary reports whether group is a probe's canary group. It is the one
// rule every surface leaves them out by (group rows and selections,
// health, the exporter, plans, watch --offsets, the volume's findings):
// only a canary named on the command line is shown.
func IsCanary(group string) bool { return strings.HasPrefix(group, CanaryPrefix) }

// WithoutCanaries returns groups without the canary groups (the slice
// itself when it holds none).
func WithoutCanaries(groups []string) []string {
	i := slices.IndexFunc(groups, IsCanary)
	if i < 0 {
		return groups
	}
	out := slices.Clone(groups[:i])
	for _, g := range groups[i+1:] {
		if !IsCanary(g) {
			out = append(out, g)
		}
	}
	return out
}

// Canary is the canary group of one broker.
type Canary struct {
	Broker string `json:"broker"`
	Node   int32  `json:"node"`
	Group  string `json:"group"`
	// Tier is how kaas routes Group to Broker (hash, or explicit when an
	// explicit entry names the canary).
	Tier string `json:"tier"`
	// Err says why the broker has no canary (it is not alive in
	// assignment.json: kaas routes no group to it).
	Err string `json:"error,omitempty"`
}

// CanaryGroups picks, for every broker listed in a, the first canary id
// "__kaasctl-canary-<broker>-<n>" that kaas routes to that broker through
// both tiers (an explicit consumerGroups[] entry for the id wins, as in
// kaas). A broker that is not alive gets no group and says why.
func CanaryGroups(a *volume.Assignment) []Canary {
	rt := a.Router()
	out := make([]Canary, 0, len(a.Brokers))
	for _, b := range a.Brokers {
		c := Canary{Broker: b.ID, Node: -1}
		if o, ok := BrokerOrdinal(b.ID); ok {
			c.Node = o
		}
		// With b alive brokers an id lands on a given one with probability
		// 1/b: 64·b tries all miss with probability below e^-64.
		tries := max(64*len(a.Brokers), 64)
		for n := 0; n < tries && c.Group == ""; n++ {
			id := CanaryPrefix + b.ID + "-" + strconv.Itoa(n)
			if res := rt.Group(id); res.Coordinator == b.ID {
				c.Group, c.Tier = id, string(res.Tier)
			}
		}
		if c.Group == "" {
			c.Err = "no group is routed to " + b.ID + " (health " + b.Health + " in assignment.json)"
			if b.Health == grouphash.HealthAlive {
				c.Err = "no canary id among the first " + strconv.Itoa(tries) + " routes to " + b.ID
			}
		}
		out = append(out, c)
	}
	return out
}

// WithoutCanaryFindings drops the findings about a canary group's own
// files (its offset file, a leftover temp file or backup of it): the
// volume's other findings are left as they are.
func WithoutCanaryFindings(fs []volume.Finding) []volume.Finding {
	canary := func(f volume.Finding) bool { return IsCanary(filepath.Base(f.Path)) }
	if !slices.ContainsFunc(fs, canary) {
		return fs
	}
	return slices.DeleteFunc(slices.Clone(fs), canary)
}
