package inspect

import (
	"math"
	"slices"
	"testing"
)

func TestLagSkew(t *testing.T) {
	t.Parallel()
	even := LagSkew([]PartitionLoad{{"t/0", 10, true, 5, true}, {"t/1", 10, true, 5, true}, {"t/2", 10, true, 5, true}, {"t/3", 10, true, 5, true}})
	if even.MaxOverMean != 1 || even.CV != 0 || len(even.Hot) != 0 || even.Skewed() || even.ProduceMaxOverMean != 1 {
		t.Fatalf("even: %+v", even)
	}
	// All the lag on one partition, and one partition produced to 5x the
	// others: PAR is the partition count.
	one := LagSkew([]PartitionLoad{{"t/0", 0, true, 1, true}, {"t/1", 400, true, 12, true}, {"t/2", 0, true, 1, true}, {"t/3", 0, true, 1, true}, {"t/4", 0, false, 0, false}})
	if one.Partitions != 4 || one.MaxPartition != "t/1" || one.MaxOverMean != 4 || !one.Skewed() {
		t.Fatalf("one partition: %+v", one)
	}
	if math.Abs(one.CV-math.Sqrt(3)) > 1e-9 {
		t.Errorf("CV %v, want sqrt(3)", one.CV)
	}
	if len(one.Hot) != 1 || one.Hot[0].Partition != "t/1" || math.Abs(one.Hot[0].Share-0.8) > 1e-9 || one.Hot[0].Lag != 400 {
		t.Errorf("hot: %+v", one.Hot)
	}
	none := LagSkew([]PartitionLoad{{"t/0", 0, true, 0, false}, {"t/1", 0, true, 0, false}})
	if none.MaxOverMean != 0 || none.MaxPartition != "" || none.RatesKnown || none.Skewed() {
		t.Fatalf("no lag, no rates: %+v", none)
	}
}

func TestLagSpreadOfAndRates(t *testing.T) {
	t.Parallel()
	states := []PartitionState{{Topic: "t", Partition: 0, Lag: 1, LagKnown: true}, {Topic: "t", Partition: 1, Lag: 9, LagKnown: true}, {Topic: "t", Partition: 2}}
	s := LagSpreadOf(states)
	if s.Partitions != 2 || s.Max != 9 || s.MaxPartition != "t/1" || s.MaxOverMean != 1.8 {
		t.Fatalf("%+v", s)
	}
	s.AddRates(&DrainEstimate{Known: true, Partitions: []PartitionDrain{{Partition: "t/0", Known: true, ProduceRate: 1}, {Partition: "t/1", Known: true, ProduceRate: 1},
		{Partition: "t/2", Known: true, ProduceRate: 10}}})
	if !s.RatesKnown || len(s.Hot) != 1 || s.Hot[0].Partition != "t/2" || s.ProduceMaxOverMean != 2.5 {
		t.Fatalf("rates: %+v", s)
	}
	s.AddRates(nil)
	if len(s.Hot) != 1 {
		t.Fatal("no estimate leaves the rates")
	}
}

func TestOwnershipOf(t *testing.T) {
	t.Parallel()
	states := []PartitionState{{Topic: "t", Partition: 0, Lag: 5, LagKnown: true}, {Topic: "t", Partition: 1, Lag: 7, LagKnown: true},
		{Topic: "t", Partition: 2, Lag: 0, LagKnown: true}, {Topic: "old", Partition: 0, Lag: 99, LagKnown: true}}
	if OwnershipOf(nil, states) != nil {
		t.Fatal("an empty group has no ownership")
	}
	o := OwnershipOf([]MemberInfo{{ID: "a", AssignmentReported: true, Assigned: []string{"t/0"}}, {ID: "b", ClientID: "c", AssignmentReported: true}}, states)
	if !o.Reported || !slices.Equal(o.Unowned, []string{"t/1"}) || o.UnownedLag != 7 || !slices.Equal(o.Idle, []string{"b (client c)"}) {
		t.Fatalf("reported: %+v", o)
	}
	// kaas's Go broker: no assignments at all.
	o = OwnershipOf([]MemberInfo{{ID: "a"}, {ID: "b"}}, states)
	if o.Reported || o.Note != OwnershipNotReported || len(o.Unowned) != 0 || len(o.Idle) != 0 {
		t.Fatalf("not reported: %+v", o)
	}
	// Some members' assignments missing: nothing is called unowned.
	o = OwnershipOf([]MemberInfo{{ID: "a", AssignmentReported: true, Assigned: []string{"t/0"}}, {ID: "b"}}, states)
	if len(o.Unowned) != 0 || o.Note == "" {
		t.Fatalf("partly reported: %+v", o)
	}
}
