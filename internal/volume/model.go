package volume

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The volume model: every kaas generation's directories as data. A later
// kaas generation that moves a directory is one more GenerationSpec (and,
// for a directory no generation had, one more Location) here; the rest of
// kaasctl asks the Layout (LiveOffsetsDir, OffsetsDirs, LiveOffsetsDirOf,
// TxnStatePath, …) and never joins these names itself.

// Root is the directory a volume path hangs from.
type Root string

const (
	// RootData is the data dir (DATA): partitions, and the Go
	// generation's offsets.
	RootData Root = "data"
	// RootCluster is the cluster dir (CD): assignment.json, transaction
	// state, and the offsets from Rust 0.2.16 on.
	RootCluster Root = "cluster"
)

// Location is a directory of the volume: a root and a path below it.
type Location struct {
	Root Root
	Rel  string
}

// String is the location as SPEC and the help pages write it.
func (loc Location) String() string {
	if loc.Root == RootData {
		return "DATA/" + loc.Rel
	}
	return "CD/" + loc.Rel
}

// place is where the location is rooted in words ("the data dir").
func (loc Location) place() string {
	if loc.Root == RootData {
		return "the data dir"
	}
	return "the cluster dir"
}

// Path is the location on this volume, "" when its root is unknown (the
// data dir when only --cluster-dir was given).
func (l Layout) Path(loc Location) string {
	base := l.ClusterDir
	if loc.Root == RootData {
		base = l.DataDir
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, loc.Rel)
}

// Every directory any generation knows.
var (
	locDataOffsets    = Location{RootData, OffsetsDir}
	locClusterOffsets = Location{RootCluster, OffsetsDir}
)

// OffsetsDirSpec is one offsets dir as a generation sees it.
type OffsetsDirSpec struct {
	Loc Location
	// Role is OffsetsCurrent for the one dir the generation's brokers read
	// and write, else what the dir is to them (OffsetsLegacy,
	// OffsetsPreMigration, OffsetsNotRead).
	Role string
}

// GenerationSpec is what one kaas generation reads and writes on the
// volume. The table (generationSpecs) is the only place that knows it.
type GenerationSpec struct {
	Gen Generation
	// Label names the generation to users; Family is the range's release
	// line and From its first release ("Rust", "0.2.16"), used when two
	// generations cannot be told apart ("Rust ≥ 0.2.16").
	Label, Family, From string
	// Short is the version range alone ("0.2.16–0.2.17").
	Short string
	// UpTo is the last kaas release of the generation: a version maps to
	// the first generation whose UpTo it does not exceed.
	UpTo [3]int
	// OffsetsDirs are the offsets dirs the generation's brokers know, the
	// live one (OffsetsCurrent) among them. Any offsets dir of another
	// generation that is not listed is OffsetsNotRead to this one.
	OffsetsDirs []OffsetsDirSpec
	// PlainMapIsOffsets: a plain-map offset file ({"t/0":12}) is read as
	// the offsets it holds (0.2.18 reads it as empty).
	PlainMapIsOffsets bool
	// ClusterSubdir is the cluster dir below the data dir when none is
	// given (KAAS_CLUSTER_DIR unset).
	ClusterSubdir string
	// Partitions is the root of the partition dirs (<topic>/<partition>
	// below it, holding manifest.json and the segments).
	Partitions Root
	// TxnState, ProducerFences, MarkerQueue and ProducerIDs are the
	// transaction dirs.
	TxnState, ProducerFences, MarkerQueue, ProducerIDs Location
	// Failover is what the generation's next controller writes.
	Failover FailoverRule
	// Migrate is what 'volume migrate' does with the generation: as --to
	// (MigrateTo: a target kaasctl migrates to; else ToRefusal says why
	// not) and as the volume's own (FromRefusal: why a volume of it is not
	// migrated; "" when it is the source of a migration).
	Migrate MigrateRule
	// Versions are the --kaas-version values that name the generation, as
	// the usage lists them.
	Versions string
	// Broker is what the generation's brokers do that kaasctl's answers
	// and fixes depend on.
	Broker BrokerFacts
	// Restart is what one broker's restart takes (plan restart's waits).
	Restart RestartRule
}

// RestartRule is how long a broker's restart must take for the
// controller's versions to be the ones plan restart predicts.
type RestartRule struct {
	// LeaveVersion says when the version without a stopped broker comes.
	LeaveVersion string
	// StopToStart is the least time between a broker's stop and its start;
	// Why says what goes wrong sooner.
	StopToStart time.Duration
	Why         string
}

// BrokerFacts are a generation's broker behaviours kaasctl words its
// refusals, findings and fixes from (each seen on a real cluster of the
// generation unless it says otherwise).
type BrokerFacts struct {
	// Who names the brokers the facts are of, when not every release of
	// the generation's layout runs that broker.
	Who string
	// TimeLookup is what ListOffsets by timestamp answers.
	TimeLookup string
	// ServedBehindCause is how the generation's broker comes to serve a
	// partition below its segments' log end; ServedBehindFix what brings
	// it back, or that nothing known does.
	ServedBehindCause, ServedBehindFix string
	// ReaperWritesMarkers: the transaction reaper writes the ABORT
	// markers of a transaction it aborts to every partition of it;
	// ReaperNote says what it does.
	ReaperWritesMarkers bool
	ReaperNote          string
	// HangingTxnFix is what ends a read_committed stall behind a
	// transaction whose marker never reached the partition.
	HangingTxnFix string
	// HoldsReadCommitted: the broker's fetch stops read_committed
	// consumers at the last stable offset (an open transaction holds them
	// back); ReadCommittedNote says what it does.
	HoldsReadCommitted bool
	ReadCommittedNote  string
	// ListsStableOffset: ListOffsets with read_committed isolation answers
	// the last stable offset consumers are held at (else kaasctl takes it
	// from the segments); StableOffsetNote says what it answers.
	ListsStableOffset bool
	StableOffsetNote  string
	// TornTail is what the broker does with bytes after the last complete
	// batch of an active segment (a write a crash cut off).
	TornTail string
	// HungControllerKeepsLease: a controller whose broker stopped
	// answering (deadlocked) keeps renewing its lease from a runtime of
	// its own, so no failover happens; HungController says it and the fix.
	HungControllerKeepsLease bool
	HungController           string
	// ServedNotFiled is how the broker comes to serve from memory a
	// committed offset its group's offset file lacks.
	ServedNotFiled string
	// StaleEnd is what ends the broker serving a partition below its
	// segments (the incident stays reported until then).
	StaleEnd StaleEndRule
	// CommitOrder is how a group's commits come to land in its offset
	// file out of order (the file going a few records back with the same
	// members): what an attribution of such a rewind to the group's own
	// members says.
	CommitOrder string
}

// MigrateRule is what 'volume migrate' does with a generation.
type MigrateRule struct {
	MigrateTo   bool
	ToRefusal   string
	FromRefusal string
}

// StaleEndRule says what ends a stale high watermark on a generation: the
// incident stays reported until its cause is gone, not until the served
// end catches up (producers append at the stale end, so it does).
type StaleEndRule struct {
	// NewEpochRescans: a takeover at a new epoch re-scans the segments,
	// so the incident ends once the partition's epoch in assignment.json
	// passes the one it was seen at (Go). Otherwise only a served end that
	// reaches what the segments held ends it (Rust 0.2.18 keeps the stale
	// end through takeovers).
	NewEpochRescans bool
	// Source says where the rule comes from.
	Source string
}

// goBroker and rustBroker are the two flavours' broker facts.
var (
	goBroker = BrokerFacts{
		Who:        "kaas's Go flavour (Rust 0.2.0–0.2.15 share its volume layout but run the Rust broker: expect Rust 0.2.18's answers from them)",
		TimeLookup: "offset 0 for every timestamp (the log start), so a reset trusted as-is rewinds to the start of the log",
		ServedBehindCause: "a broker that takes a partition over at the epoch its manifest already holds keeps the manifest's high " +
			"watermark instead of re-scanning the segments",
		ServedBehindFix: "restart the leader of each partition listed, and wait until the controller has moved its partitions before it " +
			"comes back (a broker back before the controller notices takes them over at the same epoch again): the next takeover, at a " +
			"new epoch, re-scans the segments",
		TornTail: "its takeover truncates the segment at the last complete batch (internal/storage/segment.go)",
		ReaperNote: "the reaper aborts an overdue transaction after its timeout (seen: after 60 s, and 18 s for a 15 s timeout) in its slot " +
			"file only: the Go flavour writes no transaction marker at all, for a commit, an abort or the reaper (seen on a real cluster: no " +
			"marker reached the log 20 s after the reaper aborted one)",
		HangingTxnFix: "nothing to end: the Go flavour does not hold read_committed consumers behind transactions",
		ReadCommittedNote: "it serves read_committed fetches up to the high watermark (its last stable offset is the high watermark): a " +
			"read_committed consumer reads every transactional record, open, committed or aborted, as it arrives (seen on a real cluster: " +
			"one reached the log end past an open transaction), so no transaction holds a group back and aborted records are read as committed",
		StableOffsetNote: "its last stable offset is its high watermark",
		HungController: "a frozen broker (SIGSTOP) is never removed from assignment.json by the Go controller (2 m 44 s seen, no new " +
			"version); its groups cannot commit and FindCoordinator still names it",
		ServedNotFiled: "kaas's Go coordinator writes each commit's merged offsets outside its lock through one <group>.tmp, so two commits of the group at once can land the older snapshot last",
		StaleEnd:       StaleEndRule{NewEpochRescans: true, Source: "observed on a real Go-flavour cluster: a restart of the leader (a takeover at a new epoch) re-scanned the segments and served their end"},
		CommitOrder: "kaas's Go coordinator writes each commit's merged offsets outside its lock through one shared <group>.tmp, so two members' " +
			"commits land out of order: a few records back, about once a minute on a 2-member group of a real Go-flavour cluster",
	}
	rustBroker = BrokerFacts{
		TimeLookup: "offset -1, timestamp -1 for every timestamp (read by clients as \"no record at or after that time\": the log end)",
		ServedBehindCause: "a broker opening a partition trusts recovery-checkpoint.json's high watermark when the checkpoint names " +
			"the active segment and a byte position within it, and writes it back at every close, so a stale one never goes away",
		ServedBehindFix: "stop every broker (any broker that opens the partition trusts the checkpoint, and one that closes it writes " +
			"it back), remove recovery-checkpoint.json from the partition's dir, then start them: the next open scans the segments " +
			"(checked on a real 0.2.18 cluster); a restart of the leader or a takeover at a new epoch does not help (the stale end " +
			"survived both); until then stop producing to it (a produce appends at the stale end, over records consumers have not read)",
		ReaperNote: "the reaper aborts an overdue transaction on time (within its 10 s sweep) and bumps its epoch, but writes no ABORT " +
			"marker (its abort record carries no partitions; seen on a real 0.2.18 cluster on every partition of the transaction, led " +
			"by its coordinator or not): a read_committed consumer of each of them stops at the transaction's first record until the " +
			"brokers restart; after a restart of every broker the stall ends and read_committed consumers read past the transaction " +
			"(its records were never marked aborted)",
		HangingTxnFix: "restart every broker (seen on a real 0.2.18 cluster): the stall ends and read_committed consumers read the " +
			"transaction's records as if committed",
		HoldsReadCommitted: true,
		ReadCommittedNote:  "its fetch stops read_committed consumers at the last stable offset, the first record of the oldest transaction with no marker after it (seen on a real 0.2.18 cluster)",
		StableOffsetNote: "ListOffsets with read_committed isolation answers the high watermark, not the last stable offset its fetch holds " +
			"consumers at (seen on a real 0.2.18 cluster: 8 while read_committed consumers were held at 5): kaasctl takes the last stable " +
			"offset from the segments",
		TornTail: "it does not truncate them: it serves the end before them, its next append goes after them, and a consumer " +
			"fetching there stops at the torn bytes for good (a restart scans up to them again and hides what was appended); fix: " +
			"with every broker stopped, cut the active segment at the last complete batch (truncate -s BYTES SEGMENT)",
		HungControllerKeepsLease: true,
		HungController: "a controller whose broker deadlocked (seen in a takeover, DiskStorageEngine::relinquish) stops answering while " +
			"its control runtime keeps renewing the controller lease: no other broker takes over and no version is written until it " +
			"is killed; fix: kill the broker's process (kill -9, or delete its pod): the lease then expires (15 s) and another broker " +
			"takes over",
		// Seen on a real 0.2.18 cluster: a partition served 429 while its
		// segments held 574 through two takeovers at new epochs, a
		// graceful close and a removed recovery-checkpoint.json.
		ServedNotFiled: "kaas's Rust broker swallows a failed write of the offset file and tells the client the commit succeeded (a group id it cannot use as a file name, or an I/O error such as a full or read-only volume)",
		StaleEnd:       StaleEndRule{Source: "observed on a real Rust 0.2.18 cluster: the stale end survived two takeovers at new epochs and a graceful close"},
		CommitOrder: "kaas's Rust coordinator merges a commit into its memory under its lock but writes the merged offsets after it, through one " +
			"fixed <group>.json.tmp, so two members' commits can land out of order (read from kaas-coordinator's offset_store.rs)",
	}
)

// FailoverRule is what a kaas generation's controller writes in its first
// version after taking over from a controller that stopped, and where
// kaasctl's model of it comes from.
type FailoverRule struct {
	// Reloads: the new controller reloads the previous assignment.json and
	// balances its explicit entries against the groups the alive brokers
	// report active, as any other version (Rust). Without it the first
	// version has no consumerGroups and every group falls back to the hash
	// tier over the alive brokers (Go).
	Reloads bool
	// Summary says what the next controller writes, Source where the
	// model comes from (a lab observation or kaas's code), Caveat what the
	// volume cannot tell (kaas releases that share the layout but not the
	// controller).
	Summary, Source, Caveat string
	// FirstReportEmpty: the new controller publishes its first version as
	// soon as every broker it counts ready has connected its heartbeat,
	// and a broker's first heartbeat reports no active groups, so the
	// groups the last broker to connect coordinates get no entry in that
	// version (they route by the hash tier). Which broker connects last
	// nothing on the volume tells. LastToConnect says it in words.
	FirstReportEmpty bool
	LastToConnect    string
	// Timing says when the first version comes after the controller
	// stops, by how it stopped, and what the brokers do until then.
	Timing string
	// ExtraVersionOnStop: a graceful stop of the controller can write one
	// version more (still listing the stopping broker alive, no entries)
	// before the one without it; ExtraVersion says it in words.
	ExtraVersionOnStop bool
	ExtraVersion       string
}

// The transaction dirs are the same in every generation so far.
var (
	locTxnState       = Location{RootCluster, TxnStateDir}
	locProducerFences = Location{RootCluster, FencesDir}
	locMarkerQueue    = Location{RootCluster, MarkerQueueDir}
	locProducerIDs    = Location{RootCluster, ProducerIDsDir}
)

// rustFailover is read from kaas's Rust controller (the same from
// v0.2.0-preview to v0.2.18-preview): bins/kaas/src/cluster.rs waits up to
// 7 s for the ready brokers to connect (heartbeat grace), then
// AssignmentLoop::start loads the previous assignment.json, carries the
// version counter on and runs update_assignment, whose balance_groups keeps
// an active group's entry when its broker is alive and places any other
// active group by rendezvous.
var rustFailover = FailoverRule{
	Reloads: true,
	Summary: "the new controller loads the previous assignment.json, carries its version counter on (next version = previous + 1) " +
		"and rebalances the previous entries against the groups the alive brokers report active: an entry on an alive broker is kept " +
		"with its epoch; any other active group gets an entry placed by rendezvous over the alive brokers; " +
		"a group no alive broker reports active gets no entry and routes by the hash tier",
	Source: "kaas's Rust controller code: crates/kaas-controller/src/assignment_writer.rs (AssignmentLoop::start, update_assignment), " +
		"balancer.rs (balance_groups) and the heartbeat grace in bins/kaas/src/cluster.rs; checked on a real 3-broker Rust 0.2.18 cluster",
	FirstReportEmpty: true,
	LastToConnect: "the new controller publishes as soon as every broker it counts ready has connected its heartbeat, and a broker's " +
		"first heartbeat reports no active groups (crates/kaas-broker/src/heartbeat_client.rs sends an empty status on connect; the 1 s " +
		"status with the groups comes after): the groups coordinated by the last broker to connect get no entry and route by the hash " +
		"tier, and so do those of any broker that connected less than about 1 s before it (on a loaded machine every broker's were " +
		"lost once); which brokers those are (the new controller itself, too), nothing on the volume tells. A SIGTERM does not avoid it: the grace " +
		"waits its full 7 s, long enough for every broker to report its groups, only while the stopped broker still counts ready (its " +
		"readiness is probed every 5 s), and a stopping controller can take the lease once more as it re-enters candidacy (the " +
		"controller epoch then jumps by 2), so its successor waits out the lease and publishes as after a kill -9 (all three seen)",
	Timing: "kill -9: the lease expires after 15 s and the next version came 17–20 s after the kill; SIGTERM: the lease is released and " +
		"taken again within 1–2 s and the next version came 8–9 s after the stop, or (the stopping controller took the lease once more, " +
		"epoch + 2) 15 s later and the version 20 s after the stop; from the new lease epoch until that version the other brokers reject " +
		"assignment.json as a stale controller epoch and keep serving the previous version (3–18 s seen)",
}

// The restart rules: a group moved by a stop gets its entry at the next
// version only if its members re-joined its new coordinator (which then
// reports it active) before that version is computed.
var (
	goRestart = RestartRule{
		LeaveVersion: "within about 2 s of the stop (the controller's broker-set watcher polls every 2 s)",
		StopToStart:  15 * time.Second,
		Why: "the groups the stop moved must re-join their new coordinator before the broker comes back: a broker restarted 3 s after " +
			"its stop came back before they had re-joined anywhere, and they got no entry (hash tier, one more move); with 15 s between " +
			"stop and start every predicted entry appeared (real Go-flavour cluster)",
	}
	rustRestart = RestartRule{
		LeaveVersion: "3–6 s after the stop (the heartbeat stream drops, then the 2 s broker-set poll; about 1 s after a kill -9)",
		StopToStart:  15 * time.Second,
		Why: "the groups the stop moved must re-join their new coordinator, and its next 1 s heartbeat report them active, before the " +
			"version that lists the broker again is computed: started sooner, the broker comes back before they re-joined and they get " +
			"no entry (the hash tier over every broker: one more move); seen on a real Rust 0.2.18 cluster, where 2 of 7 planned moves " +
			"at the rejoin steps held without the wait",
	}
)

var generationSpecs = []GenerationSpec{
	{
		Gen: GenGo, Label: "Go / Rust ≤ 0.2.15", Family: "Go", Short: "≤ 0.2.15", UpTo: [3]int{0, 2, 15},
		OffsetsDirs:       []OffsetsDirSpec{{locDataOffsets, OffsetsCurrent}, {locClusterOffsets, OffsetsNotRead}},
		PlainMapIsOffsets: true,
		Broker:            goBroker,
		Restart:           goRestart,
		Versions:          "go, 0.1.190, 0.2.15",
		Migrate:           MigrateRule{ToRefusal: "--to: a migration goes forward, to 0.2.18; moving offsets back into the data dir for Go / Rust ≤ 0.2.15 brokers is not supported"},
		Failover: FailoverRule{
			Summary: "the new controller's first version has no consumerGroups (null): every explicit entry is dropped and every group " +
				"falls back to the hash tier over the alive brokers; the version counter goes on (one counter across controller epochs); " +
				"its next version places the active groups afresh",
			Source: "observed on a real 3-broker Go-flavour kaas cluster (controller terminated: its successor's first version had consumerGroups null)",
			Caveat: "Rust 0.2.0–0.2.15 keep this volume layout but their controller reloads the previous entries (as from 0.2.16 on): " +
				"for such a cluster pin --failover reload",
			ExtraVersionOnStop: true,
			ExtraVersion: "a graceful stop of the controller can write one version more: the new controller's first version still listed " +
				"the stopping broker alive (with no entries) and the next one dropped it, so groups moved twice within 2 s (seen once on a " +
				"real Go-flavour cluster; another run wrote one version)",
		},
	},
	{
		Gen: Gen016, Label: "Rust 0.2.16–0.2.17", Family: "Rust", From: "0.2.16", Short: "0.2.16–0.2.17", UpTo: [3]int{0, 2, 17},
		OffsetsDirs:       []OffsetsDirSpec{{locClusterOffsets, OffsetsCurrent}, {locDataOffsets, OffsetsPreMigration}},
		PlainMapIsOffsets: true,
		Failover:          rustFailover,
		Broker:            rustBroker,
		Restart:           rustRestart,
		Versions:          "0.2.16, 0.2.17",
		Migrate: MigrateRule{ToRefusal: "--to 0.2.16/0.2.17: those brokers migrate DATA/__consumer_offsets themselves, with a shim at boot; kaasctl migrates only to 0.2.18 (--to 0.2.18), whose brokers no longer do",
			FromRefusal: "the volume is pinned to 0.2.16–0.2.17, whose brokers migrate %s themselves at boot; start one, or pin --kaas-version go if the brokers are older"},
	},
	{
		Gen: Gen018, Label: "Rust 0.2.18", Family: "Rust", From: "0.2.18", Short: "0.2.18", UpTo: [3]int{0, 2, 18},
		OffsetsDirs:       []OffsetsDirSpec{{locClusterOffsets, OffsetsCurrent}, {locDataOffsets, OffsetsLegacy}},
		PlainMapIsOffsets: false,
		Failover:          rustFailover,
		Broker:            rustBroker,
		Restart:           rustRestart,
		Versions:          "0.2.18",
		Migrate: MigrateRule{MigrateTo: true,
			FromRefusal: "the volume is pinned to 0.2.18: %s is a legacy leftover there, which 'kaasctl volume repair' rescues; 'volume migrate' moves a Go-generation volume's live dir"},
	},
}

func init() {
	for i := range generationSpecs {
		s := &generationSpecs[i]
		s.ClusterSubdir, s.Partitions = ClusterSubdir, RootData
		s.TxnState, s.ProducerFences, s.MarkerQueue, s.ProducerIDs = locTxnState, locProducerFences, locMarkerQueue, locProducerIDs
	}
}

// KaasVersionList is every --kaas-version value the generations accept,
// for usage text ("go, 0.1.190, 0.2.15 (Go / Rust ≤ 0.2.15), ...").
func KaasVersionList() string {
	parts := make([]string, len(generationSpecs))
	for i, s := range generationSpecs {
		parts[i] = s.Versions + " (" + s.Label + ")"
	}
	return strings.Join(parts, ", ")
}

// Spec is the generation's row of the volume model; ok is false for
// GenUnknown.
func (g Generation) Spec() (GenerationSpec, bool) {
	for _, s := range generationSpecs {
		if s.Gen == g {
			return s, true
		}
	}
	return GenerationSpec{}, false
}

// Live is the location of the generation's live offsets dir.
func (s GenerationSpec) Live() Location {
	for _, d := range s.OffsetsDirs {
		if d.Role == OffsetsCurrent {
			return d.Loc
		}
	}
	return Location{}
}

// roleAt is the role of an offsets dir location to this generation.
func (s GenerationSpec) roleAt(loc Location) string {
	for _, d := range s.OffsetsDirs {
		if d.Loc == loc {
			return d.Role
		}
	}
	return OffsetsNotRead
}

// offsetsLocations are every offsets dir any generation knows, in the
// order of first mention (the newest generation's live dir first).
func offsetsLocations() []Location {
	var out []Location
	for i := len(generationSpecs) - 1; i >= 0; i-- {
		for _, d := range generationSpecs[i].OffsetsDirs {
			if !slices.Contains(out, d.Loc) {
				out = append(out, d.Loc)
			}
		}
	}
	return out
}

// gensLiveAt are the generations whose live offsets dir is loc, oldest first.
func gensLiveAt(loc Location) []Generation {
	var out []Generation
	for _, s := range generationSpecs {
		if s.Live() == loc {
			out = append(out, s.Gen)
		}
	}
	return out
}

// specs of gens (unknown ones skipped).
func specsOf(gens []Generation) []GenerationSpec {
	var out []GenerationSpec
	for _, g := range gens {
		if s, ok := g.Spec(); ok {
			out = append(out, s)
		}
	}
	return out
}

// gensPhrase names a set of generations that the volume cannot tell apart:
// "Go / Rust ≤ 0.2.15" for one, "Rust ≥ 0.2.16" for the newest ones of one
// family, else the labels joined.
func gensPhrase(gens []Generation) string {
	ss := specsOf(gens)
	switch {
	case len(ss) == 0:
		return "unknown"
	case len(ss) == 1:
		return ss[0].Label
	}
	if ss[len(ss)-1].Gen == generationSpecs[len(generationSpecs)-1].Gen && ss[0].From != "" {
		same := true
		for _, s := range ss {
			same = same && s.Family == ss[0].Family
		}
		if same {
			return ss[0].Family + " ≥ " + ss[0].From
		}
	}
	ls := make([]string, len(ss))
	for i, s := range ss {
		ls[i] = s.Label
	}
	return strings.Join(ls, " or ")
}

// gensApart is "0.2.16–0.2.17 and 0.2.18": the short ranges of
// generations the volume cannot tell apart.
func gensApart(gens []Generation) string {
	ss := specsOf(gens)
	ls := make([]string, len(ss))
	for i, s := range ss {
		ls[i] = s.Short
	}
	if len(ls) <= 1 {
		return strings.Join(ls, "")
	}
	return strings.Join(ls[:len(ls)-1], ", ") + " and " + ls[len(ls)-1]
}

// liveFor is "live for Go / Rust ≤ 0.2.15" or "live from Rust 0.2.16 on".
func liveFor(loc Location) string {
	gens := gensLiveAt(loc)
	ss := specsOf(gens)
	if len(ss) > 1 && ss[len(ss)-1].Gen == generationSpecs[len(generationSpecs)-1].Gen && ss[0].From != "" {
		return "live from " + ss[0].Family + " " + ss[0].From + " on"
	}
	return "live for " + gensPhrase(gens)
}

// ScannedDir is one offsets dir of the volume with its role under the
// assumed generation (OffsetsDirs, ScanResult.Dirs).
type ScannedDir struct {
	Path   string
	Role   string
	InData bool
	Groups []string
	Loc    Location
}

// OffsetsDirs are the volume's offsets dirs with their roles under its
// generation, the live one first; a location whose root is unknown is left
// out, and one directory spelled two ways (the data dir is the cluster
// dir, a link) is listed once.
func (l Layout) OffsetsDirs() []ScannedDir {
	l = l.WithGeneration()
	var dirs []ScannedDir
	for _, loc := range offsetsLocations() {
		p := l.Path(loc)
		if p == "" {
			continue
		}
		if l.Gen.SameDir && len(dirs) > 0 {
			continue
		}
		dup := false
		for _, d := range dirs {
			dup = dup || SameDir(d.Path, p)
		}
		if dup {
			continue
		}
		dirs = append(dirs, ScannedDir{Path: p, Role: l.Gen.roleAt(loc), InData: loc.Root == RootData, Loc: loc})
	}
	slices.SortStableFunc(dirs, func(a, b ScannedDir) int {
		ac, bc := a.Role == OffsetsCurrent, b.Role == OffsetsCurrent
		switch {
		case ac && !bc:
			return -1
		case bc && !ac:
			return 1
		}
		return 0
	})
	return dirs
}

// OffsetsDirsText names every offsets dir of the volume ("A or B"), for
// messages that cannot name the live one.
func (l Layout) OffsetsDirsText() string {
	var ps []string
	for _, d := range l.OffsetsDirs() {
		ps = append(ps, d.Path)
	}
	return strings.Join(ps, " or ")
}

// LiveOffsetsDirOf is the offsets dir generation g's brokers read and write
// on this volume, "" for an unknown generation or when its root is unknown
// (the Go generation's, with only --cluster-dir given).
func (l Layout) LiveOffsetsDirOf(g Generation) string {
	s, ok := g.Spec()
	if !ok {
		return ""
	}
	if l.DataDir != "" && SameDir(l.DataDir, l.ClusterDir) {
		return l.Path(locClusterOffsets)
	}
	return l.Path(s.Live())
}

// versionGeneration maps a parsed release to its generation ("" when it is
// later than every generation kaasctl knows).
func versionGeneration(n [3]int) Generation {
	for _, s := range generationSpecs {
		if cmpVersion(n, s.UpTo) <= 0 {
			return s.Gen
		}
	}
	return GenUnknown
}

func cmpVersion(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// newestKnown is the last release kaasctl knows the layout of ("0.2.18").
func newestKnown() string {
	u := generationSpecs[len(generationSpecs)-1].UpTo
	return fmt.Sprintf("%d.%d.%d", u[0], u[1], u[2])
}

// FollowedOffsetsDir is the offsets dir a follower (watch --offsets, the
// exporter) watches: the live one, or when the volume cannot tell it, the
// one the newest generation kaasctl knows writes (where offsets will appear
// on a volume that has none yet).
func (l Layout) FollowedOffsetsDir() string {
	if d, err := l.LiveOffsetsDir(); err == nil {
		return d
	}
	return l.Path(generationSpecs[len(generationSpecs)-1].Live())
}

// CandidateOffsetsDirs are, on a volume that cannot tell its live offsets
// dir yet (no group file in any), the live dir of every generation it
// could be (the pinned one alone when pinned), newest generation first: a
// follower started before the first commit watches them all until one
// gets a group file (watch.SettleOffsetsDir). Nil when the live dir is
// known.
func (l Layout) CandidateOffsetsDirs() []string {
	l = l.WithGeneration()
	if l.Gen.LiveOffsetsDir != "" {
		return nil
	}
	gens := l.Gen.cands
	if l.Gen.Gen != GenUnknown {
		gens = []Generation{l.Gen.Gen}
	}
	var out []string
	for i := len(gens) - 1; i >= 0; i-- {
		if d := l.LiveOffsetsDirOf(gens[i]); d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Redetected is l with its generation detected afresh (a pin stays): after
// a follower settled on the dir the first group file appeared in.
func (l Layout) Redetected() Layout {
	if l.Gen.Source == GenSourcePinned {
		return l
	}
	l.Gen = DetectGeneration(l)
	return l
}

// QuarantineRel is where kaasctl sets a copy of the location aside inside
// one run's quarantine dir ("data-dir/__consumer_offsets").
func (loc Location) QuarantineRel() string { return filepath.Join(string(loc.Root)+"-dir", loc.Rel) }

// LiveOffsetsLocation is generation g's live offsets dir as a location.
func LiveOffsetsLocation(g Generation) (Location, bool) {
	s, ok := g.Spec()
	return s.Live(), ok
}

// DataDirLayout is the layout kaas itself uses for a data dir when no
// cluster dir is given (KAAS_CLUSTER_DIR unset): the cluster dir below it.
// The generation is detected when first asked (WithGeneration).
func DataDirLayout(dataDir, source string) Layout {
	return Layout{DataDir: dataDir, ClusterDir: filepath.Join(dataDir, generationSpecs[len(generationSpecs)-1].ClusterSubdir), Source: source}
}

// ReservedTopicName reports whether name is a directory kaas keeps in the
// data dir for itself under some generation (the cluster dir, an offsets
// dir): never a topic.
func ReservedTopicName(name string) bool {
	for _, s := range generationSpecs {
		if name == s.ClusterSubdir {
			return true
		}
		for _, d := range s.OffsetsDirs {
			if d.Loc.Root == RootData && name == d.Loc.Rel {
				return true
			}
		}
	}
	return false
}

// CommitOrder is the generation's note on commits landing out of order
// (BrokerFacts.CommitOrder), which words a rewind's authors.
func (gi GenerationInfo) CommitOrder() string {
	return gi.BrokerFact(func(f BrokerFacts) string { return f.CommitOrder })
}

// BrokerFact is one of the brokers' facts for the volume's generation: the
// assumed generation's, or when it is undetermined, the candidates' when
// they agree, else each generation's in turn ("Go / Rust ≤ 0.2.15: …;
// Rust 0.2.18: …").
func (gi GenerationInfo) BrokerFact(get func(BrokerFacts) string) string {
	gens := gi.cands
	if gi.Gen != GenUnknown {
		gens = []Generation{gi.Gen}
	}
	if len(gens) == 0 {
		gens = AllGenerations
	}
	var facts []string
	by := map[string][]Generation{}
	who := map[string]string{}
	for _, s := range specsOf(gens) {
		f := get(s.Broker)
		if _, ok := by[f]; !ok {
			facts = append(facts, f)
		}
		by[f] = append(by[f], s.Gen)
		if s.Broker.Who != "" {
			who[f] = s.Broker.Who
		}
	}
	if len(facts) == 1 {
		return facts[0]
	}
	parts := make([]string, len(facts))
	for i, f := range facts {
		name := "kaas " + gensPhrase(by[f])
		if w := who[f]; w != "" {
			name = w
		}
		parts[i] = name + ": " + f
	}
	return strings.Join(parts, "; ")
}
