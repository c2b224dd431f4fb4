package inspect

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kaasctl/kaasctl/internal/wire"
)

// whois --live: the answer computed from the volume beside
// FindCoordinator's for every key.

// WhoisLiveResult is one key's computed answer plus the wire's.
type WhoisLiveResult struct {
	WhoisResult
	// WireCoordinator is FindCoordinator's answer ("" when it failed).
	WireCoordinator string `json:"wireCoordinator"`
	WireNode        int32  `json:"wireNode"`
	WireError       string `json:"wireError,omitempty"`
	// Compared is false when FindCoordinator failed for another reason
	// than COORDINATOR_NOT_AVAILABLE: nothing to compare (Agrees false).
	Compared bool `json:"compared"`
	// Agrees: the wire and the volume name the same broker (a
	// COORDINATOR_NOT_AVAILABLE answer agrees with "none").
	Agrees bool `json:"agrees"`
}

// WhoisLiveStats counts what a run compared.
type WhoisLiveStats struct {
	Keys, Disagree, Failed int
}

// CompareWhois is each key's answer from the volume beside
// FindCoordinator's (coords), counted into st.
func CompareWhois(wh *Whois, names *NodeNamer, keys []string, coords map[string]wire.Coordinator, st *WhoisLiveStats) []WhoisLiveResult {
	out := make([]WhoisLiveResult, len(keys))
	for i, k := range keys {
		r := WhoisLiveResult{WhoisResult: wh.Resolve(k), WireNode: -1}
		co := coords[k]
		if co.Err != "" {
			r.WireError = co.Err
		} else {
			r.WireNode = co.NodeID
			r.WireCoordinator = names.Name(co.NodeID)
		}
		r.Compared = co.Err == "" || co.Code == kerr.CoordinatorNotAvailable.Code
		r.Agrees = r.Compared && !WireDisagrees(r.Coordinator, co)
		if !r.Compared {
			st.Failed++
			r.Warnings = append(r.Warnings, "FindCoordinator failed: "+co.Err)
		} else if !r.Agrees {
			st.Disagree++
			wireSays := r.WireCoordinator
			if wireSays == "" {
				wireSays = "no coordinator (" + co.Err + ")"
			}
			coord := r.Coordinator
			if coord == "" {
				coord = "none"
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("DISAGREES: FindCoordinator says %s, the volume says %s", wireSays, coord))
		}
		if r.Warnings == nil {
			r.Warnings = []string{}
		}
		st.Keys++
		out[i] = r
	}
	return out
}
