package inspect

import (
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// EntryStatus is the verdict on one explicit consumerGroups[] entry,
// compared with what the hash tier alone would say.
type EntryStatus string

const (
	// EntryAgrees: the hash tier picks the same broker; retiring the entry
	// would not move the group.
	EntryAgrees EntryStatus = "agrees"
	// EntryDisagrees: the hash tier picks another broker; retiring the entry
	// (which kaas does when the group goes idle) moves the group.
	EntryDisagrees EntryStatus = "disagrees"
	// EntryDeadBroker: the entry names a listed broker that is not alive;
	// every broker answers NOT_COORDINATOR.
	EntryDeadBroker EntryStatus = "deadBroker"
	// EntryUnknownBroker: the entry names a broker absent from brokers[].
	EntryUnknownBroker EntryStatus = "unknownBroker"
	// EntryDuplicate: a later entry for a group that already has one; kaas
	// ignores it (the first wins).
	EntryDuplicate EntryStatus = "duplicate"
)

// EntryAudit is one explicit entry against the hash tier.
type EntryAudit struct {
	Index           int            `json:"index"` // position in consumerGroups[]
	Group           string         `json:"group"`
	Broker          string         `json:"broker"`
	Epoch           uint32         `json:"epoch"`
	Status          EntryStatus    `json:"status"`
	HashCoordinator string         `json:"hashCoordinator"`
	HashTier        grouphash.Tier `json:"hashTier"`
	Slot            int            `json:"slot"`
	Note            string         `json:"note"`
}

// AuditEntries checks every explicit entry of a in file order.
func AuditEntries(a *volume.Assignment) []EntryAudit {
	ring := grouphash.NewRing(a.GrouphashBrokers())
	alive := map[string]bool{}
	listed := map[string]bool{}
	for _, b := range a.Brokers {
		listed[b.ID] = true
		if b.Health == grouphash.HealthAlive {
			alive[b.ID] = true
		}
	}
	first := make(map[string]string, len(a.ConsumerGroups))
	out := make([]EntryAudit, 0, len(a.ConsumerGroups))
	for i, e := range a.ConsumerGroups {
		hp := ring.Pick(e.GroupID)
		ea := EntryAudit{Index: i, Group: e.GroupID, Broker: e.Broker, Epoch: e.Epoch,
			HashCoordinator: hp.Coordinator, HashTier: hp.Tier, Slot: hp.Slot}
		if prev, dup := first[e.GroupID]; dup {
			ea.Status = EntryDuplicate
			ea.Note = "ignored: an earlier entry names " + prev
			out = append(out, ea)
			continue
		}
		first[e.GroupID] = e.Broker
		switch {
		case !listed[e.Broker]:
			ea.Status = EntryUnknownBroker
			ea.Note = e.Broker + " is not in brokers[]: every broker answers NOT_COORDINATOR"
		case !alive[e.Broker]:
			ea.Status = EntryDeadBroker
			h, _ := a.Health(e.Broker)
			ea.Note = e.Broker + " is " + h + ": every broker answers NOT_COORDINATOR"
		case hp.Coordinator == e.Broker:
			ea.Status = EntryAgrees
		default:
			ea.Status = EntryDisagrees
			ea.Note = "retiring the entry moves the group to " + mvNone(hp.Coordinator)
		}
		out = append(out, ea)
	}
	return out
}

// BrokerChange is a broker that joined, left or changed health between two
// versions.
type BrokerChange struct {
	ID        string `json:"id"`
	Change    string `json:"change"` // joined, left, healthChanged
	OldHealth string `json:"oldHealth"`
	NewHealth string `json:"newHealth"`
}

// EntryChange is an explicit entry added, removed or moved.
type EntryChange struct {
	Group     string `json:"group"`
	Change    string `json:"change"` // added, removed, moved
	OldBroker string `json:"oldBroker"`
	NewBroker string `json:"newBroker"`
}

// DiffBrokers lists broker changes, sorted by id.
func DiffBrokers(old, cur *volume.Assignment) []BrokerChange {
	oh := brokerHealthMap(old)
	nh := brokerHealthMap(cur)
	var out []BrokerChange
	for id, h := range nh {
		o, ok := oh[id]
		switch {
		case !ok:
			out = append(out, BrokerChange{ID: id, Change: "joined", NewHealth: h})
		case o != h:
			out = append(out, BrokerChange{ID: id, Change: "healthChanged", OldHealth: o, NewHealth: h})
		}
	}
	for id, h := range oh {
		if _, ok := nh[id]; !ok {
			out = append(out, BrokerChange{ID: id, Change: "left", OldHealth: h})
		}
	}
	slices.SortFunc(out, func(a, b BrokerChange) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func brokerHealthMap(a *volume.Assignment) map[string]string {
	m := make(map[string]string, len(a.Brokers))
	for _, b := range a.Brokers {
		if _, ok := m[b.ID]; !ok {
			m[b.ID] = b.Health
		}
	}
	return m
}

// VersionRef identifies one assignment version in reports.
type VersionRef struct {
	Path              string `json:"path"`
	ControllerEpoch   int64  `json:"controllerEpoch"`
	AssignmentVersion int64  `json:"assignmentVersion"`
	Controller        string `json:"controller"`
	GeneratedAt       string `json:"generatedAt"`
}

// Ref describes a.
func VersionRefOf(path string, a *volume.Assignment) VersionRef {
	return VersionRef{Path: path, ControllerEpoch: a.ControllerEpoch, AssignmentVersion: a.AssignmentVersion,
		Controller: a.Controller, GeneratedAt: a.GeneratedAt}
}

// AssignmentDiff is the two-file comparison.
type AssignmentDiff struct {
	Old               VersionRef     `json:"old"`
	New               VersionRef     `json:"new"`
	ControllerChanged bool           `json:"controllerChanged"`
	Failover          bool           `json:"failover"`
	OldDivisor        int            `json:"oldDivisor"`
	NewDivisor        int            `json:"newDivisor"`
	Brokers           []BrokerChange `json:"brokers"`
	Entries           []EntryChange  `json:"entries"`
	GroupsChecked     int            `json:"groupsChecked"`
	TxnsChecked       int            `json:"txnsChecked"`
	Moves             []Move         `json:"moves"`
	MovesByCause      []CauseCount   `json:"movesByCause"`
}

// HasDifferences reports whether anything changed that an operator would
// care about (brokers, entries or coordinators).
func (d *AssignmentDiff) HasDifferences() bool {
	return len(d.Brokers) > 0 || len(d.Entries) > 0 || len(d.Moves) > 0
}

// DiffAssignments compares two versions; groups and txns extend the keys
// checked beyond both versions' explicit entries.
func DiffAssignments(oldPath string, old *volume.Assignment, newPath string, cur *volume.Assignment, groups, txns []string) *AssignmentDiff {
	r := ComputeMoves(MovesInput{Old: old, New: cur, Groups: groups, TxnIDs: txns})
	return &AssignmentDiff{
		Old: VersionRefOf(oldPath, old), New: VersionRefOf(newPath, cur),
		ControllerChanged: r.Transition.ControllerMoved,
		Failover:          r.Transition.Failover,
		OldDivisor:        r.Transition.OldDivisor,
		NewDivisor:        r.Transition.NewDivisor,
		Brokers:           DiffBrokers(old, cur),
		Entries:           r.Entries,
		GroupsChecked:     r.GroupsChecked,
		TxnsChecked:       r.TxnsChecked,
		Moves:             r.Moves,
		MovesByCause:      CountByCause(r.Moves),
	}
}

// BrokerLoad is one broker's share of an assignment.
type BrokerLoad struct {
	ID             string `json:"id"`
	Health         string `json:"health"` // "unlisted" for a broker named only by partitions or entries
	LastSeen       string `json:"lastSeen"`
	Partitions     int    `json:"partitions"`
	Groups         int    `json:"groups"`
	ExplicitGroups int    `json:"explicitGroups"`
	HashGroups     int    `json:"hashGroups"` // hash and hash-fallback
	FallbackGroups int    `json:"fallbackGroups"`
}

// AssignmentSummary is what `assignment show` reports.
type AssignmentSummary struct {
	VersionRef
	Age                 string           `json:"age"`
	Brokers             []BrokerLoad     `json:"brokers"`
	AliveBrokers        int              `json:"aliveBrokers"`
	Partitions          int              `json:"partitions"`
	Topics              int              `json:"topics"`
	ExplicitEntries     int              `json:"explicitEntries"`
	KnownGroups         int              `json:"knownGroups"`
	OffsetFileGroups    int              `json:"offsetFileGroups"`
	ExtraGroups         int              `json:"extraGroups"` // named with --group
	UncoordinatedGroups int              `json:"uncoordinatedGroups"`
	EntriesByStatus     map[string]int   `json:"entriesByStatus"`
	Findings            []volume.Finding `json:"findings"`
	// Groups is every known group with its coordinator, sorted by name.
	Groups []GroupPlacement `json:"groups"`
}

// GroupPlacement is one known group in an assignment: where it routes and
// why kaasctl knows it.
type GroupPlacement struct {
	Group           string `json:"group"`
	Coordinator     string `json:"coordinator"`
	Tier            string `json:"tier"`
	HashCoordinator string `json:"hashCoordinator"`
	ExplicitEntry   bool   `json:"explicitEntry"`
	OffsetFile      bool   `json:"offsetFile"`
}

// SummarizeAssignment counts partitions and groups per broker. offsetGroups
// are group names with an offset file; now is used for the age.
func SummarizeAssignment(path string, a *volume.Assignment, findings []volume.Finding, offsetGroups, extraGroups []string, now time.Time) *AssignmentSummary {
	s := &AssignmentSummary{VersionRef: VersionRefOf(path, a), Partitions: len(a.Partitions),
		ExplicitEntries: len(a.ConsumerGroups), OffsetFileGroups: len(offsetGroups),
		EntriesByStatus: map[string]int{}, Findings: findings}
	if t := a.GeneratedTime(); !t.IsZero() && !now.IsZero() {
		s.Age = now.Sub(t).Round(time.Second).String()
	}
	loads := &brokerLoads{s: s, idx: map[string]int{}}
	for _, b := range a.Brokers {
		if _, ok := loads.idx[b.ID]; ok {
			continue
		}
		bl := loads.get(b.ID)
		bl.Health, bl.LastSeen = b.Health, b.LastSeen
		if b.Health == grouphash.HealthAlive {
			s.AliveBrokers++
		}
	}
	topics := map[string]bool{}
	for _, p := range a.Partitions {
		topics[p.Topic] = true
		loads.get(p.Broker).Partitions++
	}
	s.Topics = len(topics)
	s.placeGroups(a, offsetGroups, extraGroups, loads)
	for _, e := range AuditEntries(a) {
		s.EntriesByStatus[string(e.Status)]++
	}
	slices.SortStableFunc(s.Brokers, func(x, y BrokerLoad) int { return strings.Compare(x.ID, y.ID) })
	return s
}

// brokerLoads finds a broker's load in the summary, adding an unlisted
// broker the first time a partition or a group names it.
type brokerLoads struct {
	s   *AssignmentSummary
	idx map[string]int
}

// get is broker id's load.
func (bl *brokerLoads) get(id string) *BrokerLoad {
	if i, ok := bl.idx[id]; ok {
		return &bl.s.Brokers[i]
	}
	bl.idx[id] = len(bl.s.Brokers)
	bl.s.Brokers = append(bl.s.Brokers, BrokerLoad{ID: id, Health: "unlisted"})
	return &bl.s.Brokers[len(bl.s.Brokers)-1]
}

// placeGroups routes every known group (the assignment's entries, the
// offset files' groups and those named with --group) and counts each on
// its coordinator by tier.
func (s *AssignmentSummary) placeGroups(a *volume.Assignment, offsetGroups, extraGroups []string, loads *brokerLoads) {
	rt := a.Router()
	groups := UnionGroups(a, nil, append(slices.Clone(offsetGroups), extraGroups...))
	s.ExtraGroups = len(UnionGroups(nil, nil, extraGroups))
	s.KnownGroups = len(groups)
	hasFile := make(map[string]bool, len(offsetGroups))
	for _, g := range offsetGroups {
		hasFile[g] = true
	}
	s.Groups = make([]GroupPlacement, 0, len(groups))
	for _, g := range groups {
		r := rt.Group(g)
		s.Groups = append(s.Groups, GroupPlacement{Group: g, Coordinator: r.Coordinator, Tier: string(r.Tier),
			HashCoordinator: r.Hash.Coordinator, ExplicitEntry: r.HasExplicit, OffsetFile: hasFile[g]})
		if r.Coordinator == "" {
			s.UncoordinatedGroups++
			continue
		}
		bl := loads.get(r.Coordinator)
		bl.Groups++
		switch r.Tier {
		case grouphash.TierExplicit:
			bl.ExplicitGroups++
		case grouphash.TierHashFallback:
			bl.HashGroups++
			bl.FallbackGroups++
		default:
			bl.HashGroups++
		}
	}
}
