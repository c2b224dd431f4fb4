package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// controller is kaas's assignment writer, run by the lowest alive broker.
type controller struct {
	s         *Sandbox
	epoch     int64
	version   int64
	id        string // the broker holding the lease; "" when none is alive
	prev      *volume.Assignment
	lastAlive []string
}

func newController(s *Sandbox) *controller {
	c := &controller{s: s}
	// Like a newly elected kaas controller: adopt the file on disk, carry its
	// version forward, and win the lease at the next epoch.
	if a, _, err := volume.ReadAssignment(s.layout.AssignmentPath()); err == nil {
		c.prev = a
		c.version = a.AssignmentVersion
		c.epoch = a.ControllerEpoch
	}
	return c
}

// TimestampFormat is how kaas's controller writes generatedAt/lastSeen:
// RFC 3339 with exactly nine fractional digits and Z.
const TimestampFormat = "2006-01-02T15:04:05.000000000Z"

// rendezvous is kaas's controller placement: the alive broker with the
// highest XXH64(groupId 0x00 brokerId); ties go to the earlier broker.

// recompute runs one controller pass (the caller holds s.lifeMu): elect,
// balance partitions and groups, bump the version, write the file, apply it.
func (c *controller) recompute(reason string) error {
	s := c.s
	var alive []string
	for _, b := range s.brokers {
		if b.isRunning() {
			alive = append(alive, b.id)
		}
	}
	slices.Sort(alive)
	if len(alive) == 0 {
		// No broker, no controller: the file stays as it was.
		c.id = ""
		c.lastAlive = alive
		return nil
	}
	newLease := c.elect(alive)
	a, err := c.next(reason, alive, newLease)
	if err != nil {
		return err
	}
	return c.publish(reason, a, newLease)
}

// elect keeps the lease with its holder while it is alive, and otherwise
// gives it to the lowest alive broker at the next epoch; it reports
// whether the lease changed hands, and logs as kaas's controller does.
func (c *controller) elect(alive []string) (newLease bool) {
	s := c.s
	newLease = !slices.Contains(alive, c.id)
	if newLease {
		c.id = alive[0]
		c.epoch++
		s.byID[c.id].log.log("INFO", targetElection, "controller lease acquired", kv{"epoch", c.epoch}, kv{"identity", c.id})
	} else if c.lastAlive != nil && !slices.Equal(c.lastAlive, alive) {
		s.byID[c.id].log.log("INFO", targetCluster, "controller: broker set changed", kv{"prev", debugSet(c.lastAlive)}, kv{"cur", debugSet(alive)})
	}
	c.lastAlive = alive
	return newLease
}

// next builds the next assignment version: every alive broker, the
// partitions and the active groups balanced over them (no group entries
// in a new controller's first version when it drops them on failover).
func (c *controller) next(reason string, alive []string, newLease bool) (*volume.Assignment, error) {
	s := c.s
	ctl := s.byID[c.id].log
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	topics, err := s.topicPartitions(ctx)
	if err != nil {
		ctl.log("WARN", targetCluster, "controller: assignment update failed", kv{"err", err.Error()}, kv{"reason", reason})
		return nil, fmt.Errorf("controller: list topics: %w", err)
	}
	active, err := s.activeGroups(ctx, alive)
	if err != nil {
		ctl.log("WARN", targetCluster, "controller: assignment update failed", kv{"err", err.Error()}, kv{"reason", reason})
		return nil, fmt.Errorf("controller: list groups: %w", err)
	}
	now := s.opts.Now().UTC().Format(TimestampFormat)
	a := &volume.Assignment{ControllerEpoch: c.epoch, GeneratedAt: now, Controller: c.id,
		Brokers: make([]volume.BrokerEntry, 0, len(alive)), Partitions: []volume.PartitionEntry{}}
	for _, id := range alive {
		a.Brokers = append(a.Brokers, volume.BrokerEntry{ID: id, Health: grouphash.HealthAlive, LastSeen: now})
	}
	a.Partitions = c.balancePartitions(topics, alive)
	a.ConsumerGroups = c.balanceGroups(active, alive)
	if newLease && s.opts.Failover == FailoverDrop {
		// The Go flavour's new controller starts without the previous
		// entries: its first version has none (every group falls back to
		// the hash tier); the next one places the active groups afresh.
		a.ConsumerGroups = nil
	}
	c.version++
	a.AssignmentVersion = c.version
	return a, nil
}

// publish writes the assignment to assignment.json atomically and has the
// brokers apply it, unless they would skip it as kaas's do: the same
// controller epoch with a version not newer than the one applied.
func (c *controller) publish(reason string, a *volume.Assignment, newLease bool) error {
	s := c.s
	ctl := s.byID[c.id].log
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.layout.AssignmentPath(), raw); err != nil {
		ctl.log("WARN", targetCluster, "controller: assignment update failed", kv{"err", err.Error()}, kv{"reason", reason})
		return fmt.Errorf("controller: write %s: %w", s.layout.AssignmentPath(), err)
	}
	c.prev = a
	ctl.log("DEBUG", targetWriter, "controller recompute", kv{"reason", reason}, kv{"assignment_version", a.AssignmentVersion},
		kv{"partitions", len(a.Partitions)}, kv{"groups", len(a.ConsumerGroups)})
	if newLease {
		ctl.log("INFO", targetCluster, "controller active: assignment published", kv{"epoch", c.epoch}, kv{"version", a.AssignmentVersion})
	}
	st, _ := os.Stat(s.layout.AssignmentPath())
	if cur := s.route.Load(); cur != nil && cur.a.ControllerEpoch == a.ControllerEpoch && a.AssignmentVersion <= cur.a.AssignmentVersion {
		// kaas brokers dedupe on (epoch, version): a hand-written file with
		// the same epoch and a version at or above the controller's makes
		// them skip its writes until its counter passes.
		for _, b := range s.runningBrokers() {
			b.log.log("DEBUG", targetSandbox, "sandbox: assignment.json skipped (same controller epoch, version not newer than the applied one)",
				kv{"file_version", a.AssignmentVersion}, kv{"applied_version", cur.a.AssignmentVersion})
		}
		return nil
	}
	s.apply(raw, a, st)
	return nil
}

// balancePartitions keeps a partition on its previous leader while that
// broker is alive, and otherwise moves it to the least-loaded alive broker
// with its epoch bumped.
func (c *controller) balancePartitions(topics map[tp]int, alive []string) []volume.PartitionEntry {
	prev := map[tp]volume.PartitionEntry{}
	if c.prev != nil {
		for _, p := range c.prev.Partitions {
			prev[tp{p.Topic, p.Partition}] = p
		}
	}
	load := map[string]int{}
	keys := sortedTPs(topics)
	out := make([]volume.PartitionEntry, 0, len(keys))
	var place []int
	for _, k := range keys {
		e := volume.PartitionEntry{Topic: k.topic, Partition: k.part, Role: "leader"}
		if p, ok := prev[k]; ok && slices.Contains(alive, p.Broker) {
			e.Broker, e.Epoch = p.Broker, p.Epoch
			load[p.Broker]++
		} else {
			e.Epoch = 1
			if ok {
				e.Epoch = p.Epoch + 1
			}
			place = append(place, len(out))
		}
		out = append(out, e)
	}
	for _, i := range place {
		best := alive[0]
		for _, b := range alive[1:] {
			if load[b] < load[best] {
				best = b
			}
		}
		out[i].Broker = best
		load[best]++
	}
	return out
}

// balanceGroups is kaas's balance_groups: entries only for active groups;
// an entry whose broker is still alive is kept as is; otherwise the group is
// placed (rendezvous or the routing hash) with epoch prev+1, or 1.
func (c *controller) balanceGroups(active []string, alive []string) []volume.GroupEntry {
	prev := map[string]volume.GroupEntry{}
	if c.prev != nil {
		for _, e := range c.prev.ConsumerGroups {
			if _, dup := prev[e.GroupID]; !dup {
				prev[e.GroupID] = e
			}
		}
	}
	var ring *grouphash.Ring
	if c.s.opts.Placement == PlacementHash {
		bs := make([]grouphash.Broker, len(alive))
		for i, id := range alive {
			bs[i] = grouphash.Broker{ID: id, Health: grouphash.HealthAlive}
		}
		ring = grouphash.NewRing(bs)
	}
	var out []volume.GroupEntry
	for _, g := range active {
		p, had := prev[g]
		if had && slices.Contains(alive, p.Broker) {
			out = append(out, p)
			continue
		}
		e := volume.GroupEntry{GroupID: g, Epoch: 1}
		if had {
			e.Epoch = p.Epoch + 1
		}
		if ring != nil {
			e.Broker = ring.Pick(g).Coordinator
		} else {
			e.Broker = grouphash.Rendezvous(g, alive)
		}
		out = append(out, e)
	}
	return out
}

// topicPartitions lists every topic partition kfake holds.
func (s *Sandbox) topicPartitions(ctx context.Context) (map[tp]int, error) {
	md, err := s.adm.Metadata(ctx)
	if err != nil {
		return nil, err
	}
	out := map[tp]int{}
	for name, t := range md.Topics {
		if t.Err != nil || t.IsInternal {
			continue
		}
		for p := range t.Partitions {
			out[tp{name, p}] = 0
		}
	}
	return out, nil
}

// activeGroups is the controller's snapshot of active groups: every group
// kfake holds in memory (any state but Dead, so Empty groups count, as in
// kaas) whose coordinator is alive — a stopped broker's groups vanish from
// the set at once, as kaas drops a disconnected broker's report.
func (s *Sandbox) activeGroups(ctx context.Context, alive []string) ([]string, error) {
	lg, err := s.listKfake(ctx)
	if err != nil {
		return nil, err
	}
	s.setKfakeGroups(lg)
	rs := s.route.Load()
	var out []string
	for _, d := range lg.Groups {
		g := d.Group
		if d.GroupState == "Dead" {
			continue
		}
		if rs == nil || !slices.Contains(alive, rs.group(g)) || s.unloaded.has(g) {
			continue
		}
		out = append(out, g)
	}
	slices.Sort(out)
	return out, nil
}

// refreshTopics recomputes when topics appear or vanish, and brings every
// partition's segment files (and, as kaas writes it, its manifest) up to
// the brokers' log end.
func (s *Sandbox) refreshTopics() {
	ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
	defer cancel()
	topics, err := s.topicPartitions(ctx)
	if err != nil {
		return
	}
	rs := s.route.Load()
	if reason, changed := topicsChanged(rs, topics); changed {
		s.lifeMu.Lock()
		if !s.closed.Load() {
			_ = s.ctl.recompute(reason)
		}
		s.lifeMu.Unlock()
		rs = s.route.Load()
	}
	if len(topics) == 0 {
		return
	}
	s.syncLogs(ctx, topics, rs)
}

// topicsChanged reports whether the partitions kfake holds are not those
// the assignment places, and the controller's reason: a topic created, or
// one deleted when there are fewer partitions than placed.
func topicsChanged(rs *routeState, topics map[tp]int) (reason string, changed bool) {
	changed = rs == nil || len(rs.leaders) != len(topics)
	if !changed {
		for k := range topics {
			if _, ok := rs.leaders[k]; !ok {
				changed = true
				break
			}
		}
	}
	reason = "topic_created"
	if rs != nil && len(topics) < len(rs.leaders) {
		reason = "topic_deleted"
	}
	return reason, changed
}

// syncLogs brings each partition's segment files (and manifest) to the
// log start and end kfake lists, at the partition's leader epoch in the
// assignment; not while the test planted the segments itself.
func (s *Sandbox) syncLogs(ctx context.Context, topics map[tp]int, rs *routeState) {
	names := map[string]bool{}
	for k := range topics {
		names[k.topic] = true
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	starts, err := s.adm.ListStartOffsets(ctx, list...)
	if err != nil {
		return
	}
	ends, err := s.adm.ListEndOffsets(ctx, list...)
	if err != nil {
		return
	}
	ends.Each(func(lo kadmListedOffset) {
		if lo.Err != nil {
			return
		}
		st, ok := starts.Lookup(lo.Topic, lo.Partition)
		if !ok || st.Err != nil {
			return
		}
		var epoch uint32
		if rs != nil {
			epoch = rs.epochs[tp{lo.Topic, lo.Partition}]
		}
		if !s.plantedLogs.Load() {
			s.kaasLog.observe(lo.Topic, lo.Partition, epoch, st.Offset, lo.Offset, s.manifests, !s.kaasManifests.Load(), s.fetchBatches)
		}
	})
}
