package inspect

import (
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// BuildLiveFacts gathers what doctor judges from a live round: rows are
// the groups with their live view merged (MergeLive), la the answers,
// brokers how each broker took the round, a the volume's assignment (nil
// without a volume). A FindCoordinator failure other than
// COORDINATOR_NOT_AVAILABLE (a group no broker holds yet) is a failed
// lookup; a broker the assignment lists as alive that did not answer, or
// that the cluster metadata lacks, is unreachable.
func BuildLiveFacts(rows []GroupRow, la *LiveAnswers, brokers []BrokerSource, a *volume.Assignment) LiveFacts {
	facts := LiveFacts{Unreachable: map[string]string{}, Coordinates: map[string]int{}, Rows: rows}
	for i := range rows {
		if c := rows[i].Coordinator; c != "" {
			facts.Coordinates[c]++
		}
		if co, ok := la.Coords()[rows[i].Group]; ok && co.Failed() {
			facts.LookupFailed = append(facts.LookupFailed, rows[i].Group)
		}
	}
	answered := map[int32]bool{}
	for _, b := range brokers {
		if b.Answered {
			answered[b.Node] = true
		} else {
			facts.Unreachable[b.Broker] = b.Error
		}
	}
	if a != nil {
		for _, b := range a.Brokers {
			n, ok := BrokerOrdinal(b.ID)
			if !ok || b.Health != "alive" || answered[n] {
				continue
			}
			if _, known := facts.Unreachable[b.ID]; !known {
				facts.Unreachable[b.ID] = "alive in assignment.json but missing from the brokers' cluster metadata"
			}
		}
	}
	return facts
}

// ListedLiveFacts merges one group gathering (wire.GatherGroups with
// Describe) with the volume into what doctor judges, with the brokers as
// sources of the report: listed are the rows prepared from the gathering's
// listings while its lookups were in flight (wire.GroupRounds.OnListed,
// PrepareListedRows), a is the volume's assignment (nil without a volume,
// or when it is missing or unreadable).
func ListedLiveFacts(gg *wire.GatheredGroups, listed *ListedRows, a *volume.Assignment) (LiveFacts, []BrokerSource) {
	la := NewLiveAnswers(gg, a)
	rows := MergeListedRows(listed, la)
	sources := BrokerSources(gg.Listings, la.Names)
	return BuildLiveFacts(rows, la, sources, a), sources
}
