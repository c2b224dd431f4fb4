package inspect

import (
	"slices"
	"strings"
)

// PartitionIncidents are the incidents of many groups' partitions, one per
// partition and code, with the groups they were found in (sorted).
type PartitionIncidents struct {
	Code      string
	Topic     string
	Partition int32
	Groups    []string
	// First is the first group's incident (its evidence).
	First PartitionIncident
	// State is that group's partition.
	State *PartitionState
}

// CollectIncidents gathers the partitions' incidents of states, by code
// then partition; group-level incidents (uncommitted partitions) come as
// Partition -1.
func CollectIncidents(states []*GroupState) []PartitionIncidents {
	type key struct {
		code, topic string
		part        int32
	}
	by := map[key]*PartitionIncidents{}
	var order []key
	add := func(k key, group string, in PartitionIncident, p *PartitionState) {
		pi := by[k]
		if pi == nil {
			pi = &PartitionIncidents{Code: k.code, Topic: k.topic, Partition: k.part, First: in, State: p}
			by[k] = pi
			order = append(order, k)
		}
		pi.Groups = append(pi.Groups, group)
	}
	for _, gs := range states {
		for i := range gs.Partitions {
			p := &gs.Partitions[i]
			for _, in := range p.Incidents {
				add(key{in.Code, p.Topic, p.Partition}, gs.Group, in, p)
			}
		}
		for _, in := range gs.Incidents {
			add(key{in.Code, "", -1}, gs.Group, in, nil)
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		if a.code != b.code {
			return strings.Compare(a.code, b.code)
		}
		if a.topic != b.topic {
			return strings.Compare(a.topic, b.topic)
		}
		return int(a.part - b.part)
	})
	out := make([]PartitionIncidents, len(order))
	for i, k := range order {
		out[i] = *by[k]
		slices.Sort(out[i].Groups)
	}
	return out
}
