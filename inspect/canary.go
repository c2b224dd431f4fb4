package inspect

import (
	"fmt"
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

// Canary is the canary group of one broker.
type Canary struct {
	Broker string `json:"broker"`
	Node   int32  `json:"node"`
	Group  string `json:"group"`
	// Tier is how kaas routes Group to Broker (hash, or explicit when an
	// explicit entry names the canary).
	Tier string `json:"tier"`
	// Err says why the broker has no canary (it is not alive in
	// assignment.json: kaas routes no group to it; or every id routed to
	// it holds offsets the probe did not commit).
	Err string `json:"error,omitempty"`
	// Skipped are the ids routed to the broker that the probe left alone,
	// each with why (a group of that name that kaasctl did not create).
	Skipped []string `json:"skipped,omitempty"`
}

// ProbeMetadata starts the metadata of every offset the probe commits
// ("kaasctl probe <unix ms>"): a canary group's offset file holding only
// such offsets is the probe's own.
const ProbeMetadata = "kaasctl probe"

// CanaryFileOwned reports whether the probe may write a canary group
// whose offset file is f (nil: the group has none): only when every offset
// in it is one the probe committed. A group of a canary's name that
// anybody else committed to is never written by the probe.
func CanaryFileOwned(f *volume.OffsetFile) (bool, string) {
	if f == nil {
		return true, ""
	}
	for _, e := range f.Entries {
		if !strings.HasPrefix(e.Metadata, ProbeMetadata) {
			return false, fmt.Sprintf("its offset file holds %s/%d at %d with metadata %q, which the probe did not commit: not kaasctl's, left alone",
				e.Topic, e.Partition, e.Offset, e.Metadata)
		}
	}
	return true, ""
}

// CanaryGroups picks, for every broker listed in a, the first canary id
// "__kaasctl-canary-<broker>-<n>" that kaas routes to that broker through
// both tiers (an explicit consumerGroups[] entry for the id wins, as in
// kaas) and that owned allows (nil: every id; see CanaryFileOwned). A
// broker that is not alive gets no group and says why.
func CanaryGroups(a *volume.Assignment, owned func(group string) (bool, string)) []Canary {
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
		routed := 0
		for n := 0; n < tries && c.Group == ""; n++ {
			id := CanaryPrefix + b.ID + "-" + strconv.Itoa(n)
			res := rt.Group(id)
			if res.Coordinator != b.ID {
				continue
			}
			routed++
			if owned != nil {
				if ok, why := owned(id); !ok {
					c.Skipped = append(c.Skipped, id+": "+why)
					continue
				}
			}
			c.Group, c.Tier = id, string(res.Tier)
		}
		switch {
		case c.Group != "":
		case routed > 0:
			c.Err = fmt.Sprintf("every one of the %d canary ids routed to %s is a group kaasctl did not create (%s)", routed, b.ID, c.Skipped[0])
		case b.Health == grouphash.HealthAlive:
			c.Err = "no canary id among the first " + strconv.Itoa(tries) + " routes to " + b.ID
		default:
			c.Err = "no group is routed to " + b.ID + " (health " + b.Health + " in assignment.json)"
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
