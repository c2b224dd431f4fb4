package inspect

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// doctor: every check, offline and live, as one ranked list of findings,
// each with the runbook fix.

// Checks doctor runs.
const (
	CheckVolume  = "volume"  // volume check: every file kaasctl understands
	CheckEntries = "entries" // explicit consumerGroups[] entries vs brokers and the hash tier
	CheckTxn     = "txn"     // overdue Ongoing transactions
	CheckLive    = "live"    // brokers: reachability, stale groups, FindCoordinator vs computed, file-only groups
)

// Codes of the findings doctor adds to volume check's.
const (
	DocEntryUnknownBroker = "entries.unknownBroker"
	DocEntryDeadBroker    = "entries.deadBroker"
	DocEntryDuplicate     = "entries.duplicate"
	DocTiersDisagree      = "entries.tiersDisagree"
	DocTxnOverdue         = "txn.overdue"
	DocBrokerUnreachable  = "live.brokerUnreachable"
	DocNoBrokerAnswers    = "live.noBrokerAnswers"
	DocSeedUnreachable    = "live.seedUnreachable"
	DocSeedSilent         = "live.seedSilent"
	DocStaleGroups        = "live.staleGroups"
	DocWireMismatch       = "live.wireMismatch"
	DocFileOnly           = "live.fileOnlyGroups"
	DocLookupFailed       = "live.findCoordinatorFailed"
)

// DoctorFinding is one ranked finding. Findings of the same kind are
// gathered into one (BlastRadius counts them; Subjects names up to
// MaxSubjects of them).
type DoctorFinding struct {
	Severity volume.Severity `json:"severity"`
	Check    string          `json:"check"`
	Code     string          `json:"code"`
	Message  string          `json:"message"`
	// BlastRadius is how many groups, keys or files are affected.
	BlastRadius int      `json:"blastRadius"`
	Subjects    []string `json:"subjects"`
	Fix         string   `json:"fix"`
	// Commands are concrete commands for the fix.
	Commands []string `json:"commands"`
}

// MaxSubjects bounds the subjects listed per finding.
const MaxSubjects = 20

// CheckRun says whether a check ran and why not.
type CheckRun struct {
	Name string `json:"name"`
	Ran  bool   `json:"ran"`
	Note string `json:"note"`
}

// DoctorReport is 'doctor'.
type DoctorReport struct {
	// Mode is offline, live or merged.
	Mode     string          `json:"mode"`
	Checks   []CheckRun      `json:"checks"`
	Summary  CheckSummary    `json:"summary"`
	Findings []DoctorFinding `json:"findings"`
}

// Add appends a finding.
func (r *DoctorReport) Add(f DoctorFinding) {
	if f.Subjects == nil {
		f.Subjects = []string{}
	}
	if f.Commands == nil {
		f.Commands = []string{}
	}
	if f.BlastRadius == 0 {
		f.BlastRadius = max(1, len(f.Subjects))
	}
	if len(f.Subjects) > MaxSubjects {
		f.Subjects = f.Subjects[:MaxSubjects]
	}
	r.Findings = append(r.Findings, f)
}

// Finish ranks the findings (error > warning > info, then by blast radius,
// then by code) and counts them.
func (r *DoctorReport) Finish() {
	if r.Findings == nil {
		r.Findings = []DoctorFinding{}
	}
	if r.Checks == nil {
		r.Checks = []CheckRun{}
	}
	slices.SortStableFunc(r.Findings, func(a, b DoctorFinding) int {
		if d := SeverityRank(a.Severity) - SeverityRank(b.Severity); d != 0 {
			return d
		}
		if a.BlastRadius != b.BlastRadius {
			return b.BlastRadius - a.BlastRadius
		}
		return strings.Compare(a.Code, b.Code)
	})
	r.Summary = CheckSummary{Checked: r.Summary.Checked}
	for _, f := range r.Findings {
		switch f.Severity {
		case volume.SevError:
			r.Summary.Errors++
		case volume.SevWarning:
			r.Summary.Warnings++
		default:
			r.Summary.Info++
		}
	}
}

// AddVolumeFindings gathers volume check findings by code. Paths are
// shown relative to root when under it. With entriesAudited, the volume
// check's explicit-entry findings are left to the entry audit (same facts,
// one finding each).
func (r *DoctorReport) AddVolumeFindings(fs []volume.Finding, root string, entriesAudited bool, volumeFlags string) {
	type agg struct {
		first volume.Finding
		paths []string
		n     int
	}
	byCode := map[string]*agg{}
	var order []string
	for _, f := range fs {
		if entriesAudited && (strings.HasPrefix(f.Code, "assignment.entry") || f.Code == "assignment.duplicateEntry") {
			continue
		}
		key := string(f.Severity) + "\x00" + f.Code
		a := byCode[key]
		if a == nil {
			a = &agg{first: f}
			byCode[key] = a
			order = append(order, key)
		}
		a.n++
		if len(a.paths) < MaxSubjects {
			p := f.Path
			if root != "" {
				if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
					p = rel
				}
			}
			a.paths = append(a.paths, volume.DisplayName(p))
		}
	}
	for _, k := range order {
		a := byCode[k]
		msg := a.first.Message
		if a.n > 1 {
			msg = fmt.Sprintf("%d files: %s (first: %s)", a.n, a.first.Code, a.first.Message)
		}
		f := DoctorFinding{Severity: a.first.Severity, Check: CheckVolume, Code: a.first.Code, Message: msg, BlastRadius: a.n,
			Subjects: a.paths, Fix: a.first.Fix}
		if f.Fix == "" {
			f.Fix = "see 'kaasctl volume check" + volumeFlags + "'"
		}
		vf := volumeFlags
		switch {
		case a.first.Code == volume.CodeAmbiguousGeneration || a.first.Code == volume.CodeGenerationUnknown:
			f.Commands = []string{"kaasctl volume check" + vf + " --kaas-version go      # or 0.2.16 / 0.2.18: the version the brokers run"}
		case a.first.Code == volume.CodePermissionDenied:
			f.Commands = []string{"ls -l " + shellQuote(a.first.Path)}
		case a.first.Code == volume.CodePlainMapOffsets || a.first.Code == volume.CodeOffsetsDirNotRead || a.first.Code == volume.CodePreMigrationDir:
			f.Commands = []string{"kaasctl volume check" + vf + " --severity info"}
		case strings.HasPrefix(a.first.Code, "offsets.") || a.first.Code == volume.CodeStaleTmp || a.first.Code == volume.CodeLegacyOffsetsDir:
			f.Commands = []string{"kaasctl volume check" + vf + " --severity warning", "kaasctl volume repair" + vf + "   # dry run: shows what it would change"}
		default:
			f.Commands = []string{"kaasctl volume check" + vf}
		}
		r.Add(f)
	}
}

// FixWithFlags is fix with flags (" --data-dir /data -b k:9092": what the
// operator gave) added to every quoted kaasctl command in it ('kaasctl …')
// that lacks them, so each runs as printed against the same volume and
// brokers.
func FixWithFlags(fix, flags string) string {
	const open = "'kaasctl "
	if flags == "" || !strings.Contains(fix, open) {
		return fix
	}
	var b strings.Builder
	for {
		i := strings.Index(fix, open)
		if i < 0 {
			break
		}
		j := strings.IndexByte(fix[i+1:], '\'')
		if j < 0 {
			break
		}
		cmd := fix[i : i+1+j]
		b.WriteString(fix[:i])
		b.WriteString(cmd)
		if !strings.Contains(cmd, strings.TrimSpace(flags)) {
			b.WriteString(flags)
		}
		b.WriteByte('\'')
		fix = fix[i+2+j:]
	}
	b.WriteString(fix)
	return b.String()
}

// AddEntryAudit turns the explicit-entry audit into findings, one per
// broker and status.
func (r *DoctorReport) AddEntryAudit(audit []EntryAudit, volumeFlags string) {
	type key struct {
		status EntryStatus
		broker string
	}
	groups := map[key][]string{}
	var order []key
	for _, e := range audit {
		if e.Status == EntryAgrees {
			continue
		}
		k := key{e.Status, e.Broker}
		if e.Status == EntryDisagrees {
			k.broker = ""
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e.Group)
	}
	for _, k := range order {
		gs := groups[k]
		n := len(gs)
		one := gs[0]
		switch k.status {
		case EntryUnknownBroker, EntryDeadBroker:
			code, what := DocEntryUnknownBroker, "is not in brokers[]"
			if k.status == EntryDeadBroker {
				code, what = DocEntryDeadBroker, "is not alive"
			}
			r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckEntries, Code: code, Subjects: gs, BlastRadius: n,
				Message: fmt.Sprintf("%d explicit consumerGroups[] %s %s, which %s: every broker answers NOT_COORDINATOR and %s cannot consume",
					n, pluralWord(n, "entry names", "entries name"), k.broker, what, pluralWord(n, "that group", "those groups")),
				Fix:      fmt.Sprintf("start %s again if it should exist (the entry then works); otherwise the controller retires the entry at its next recompute once the group is idle — a broker join/leave or a topic change triggers one. kaasctl never edits assignment.json.", k.broker),
				Commands: []string{"kaasctl assignment diff" + volumeFlags, "kaasctl whois" + volumeFlags + " " + shellQuote(one)}})
		case EntryDuplicate:
			r.Add(DoctorFinding{Severity: volume.SevWarning, Check: CheckEntries, Code: DocEntryDuplicate, Subjects: gs, BlastRadius: n,
				Message:  fmt.Sprintf("%d duplicate consumerGroups[] %s (kaas uses the first; the rest are dead weight)", n, pluralWord(n, "entry", "entries")),
				Fix:      "harmless for routing; report it against the kaas controller, which should write one entry per group",
				Commands: []string{"kaasctl assignment diff" + volumeFlags}})
		case EntryDisagrees:
			r.Add(DoctorFinding{Severity: volume.SevInfo, Check: CheckEntries, Code: DocTiersDisagree, Subjects: gs, BlastRadius: n,
				Message:  fmt.Sprintf("%d explicit %s the group elsewhere than the hash tier: when kaas retires an entry (the group goes idle), the group moves and rebalances once", n, pluralWord(n, "entry places", "entries place")),
				Fix:      "nothing to repair now (kaas's controller places entries by rendezvous, routing uses FNV); expect one NOT_COORDINATOR rebalance per group when its entry is retired",
				Commands: []string{"kaasctl assignment diff" + volumeFlags}})
		}
	}
}

// AddOverdueTxns reports Ongoing transactions past their timeout.
func (r *DoctorReport) AddOverdueTxns(rows []TxnRow, volumeFlags string) {
	byCoord := map[string][]TxnRow{}
	var order []string
	for _, t := range rows {
		if !t.Overdue {
			continue
		}
		if _, ok := byCoord[t.Coordinator]; !ok {
			order = append(order, t.Coordinator)
		}
		byCoord[t.Coordinator] = append(byCoord[t.Coordinator], t)
	}
	for _, c := range order {
		ts := byCoord[c]
		ids := make([]string, len(ts))
		for i, t := range ts {
			ids[i] = t.ID
		}
		worst := slices.MaxFunc(ts, func(a, b TxnRow) int { return int(a.OverdueByMs - b.OverdueByMs) })
		coord := orNone(c)
		r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckTxn, Code: DocTxnOverdue, Subjects: ids, BlastRadius: len(ts),
			Message: fmt.Sprintf("%d Ongoing %s coordinated by %s past the timeout (worst %s over, %s): read_committed consumers of their partitions are stuck behind them",
				len(ts), pluralWord(len(ts), "transaction", "transactions"), coord, FormatDurationMs(worst.OverdueByMs), worst.ID),
			Fix:      fmt.Sprintf("kaas's reaper aborts an expired transaction within 10 s, so it is not running on %s: restart broker %s (its reaper aborts them on start), then check 'kaasctl txn list --overdue'", coord, coord),
			Commands: []string{"kaasctl txn describe" + volumeFlags + " " + shellQuote(worst.ID), "kubectl delete pod " + coord + "   # restart the coordinator"}})
	}
}

// LiveFacts is what the live checks learned.
type LiveFacts struct {
	// Unreachable maps a broker (id or address) to why it did not answer.
	Unreachable map[string]string
	// Coordinates maps a broker to how many known groups it coordinates
	// (computed), the blast radius of losing it.
	Coordinates map[string]int
	// Rows are groups list rows with their live view.
	Rows []GroupRow
	// LookupFailed counts groups whose FindCoordinator failed.
	LookupFailed []string
}

// AddLive turns live facts into findings.
func (r *DoctorReport) AddLive(f LiveFacts, volumeFlags, brokerFlags string) {
	for _, b := range sortedMapKeys(f.Unreachable) {
		n := f.Coordinates[b]
		r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckLive, Code: DocBrokerUnreachable, Subjects: []string{b}, BlastRadius: max(n, 1),
			Message:  fmt.Sprintf("broker %s does not answer: %s; %d known groups are coordinated by it", b, f.Unreachable[b], n),
			Fix:      fmt.Sprintf("check the pod and its logs (kubectl get pod %s; kubectl logs %s); its groups get errors until it is back or the controller drops it and they move", b, b),
			Commands: []string{"kubectl get pod " + b, "kaasctl takeover trace" + volumeFlags}})
	}
	stale := map[string][]string{}
	var mismatch, fileOnly []string
	for i := range f.Rows {
		row := &f.Rows[i]
		if row.Live != nil {
			for _, b := range row.Live.StaleOn {
				stale[b] = append(stale[b], row.Group)
			}
		}
		if row.HasIssue(IssueWireMismatch) {
			mismatch = append(mismatch, row.Group)
		}
		if row.HasIssue(IssueFileOnly) {
			fileOnly = append(fileOnly, row.Group)
		}
	}
	for _, b := range sortedMapKeys(stale) {
		gs := stale[b]
		r.Add(DoctorFinding{Severity: volume.SevWarning, Check: CheckLive, Code: DocStaleGroups, Subjects: gs, BlastRadius: len(gs),
			Message: fmt.Sprintf("broker %s lists %d %s it does not coordinate (stale in-memory groups: tools that union ListGroups show them, and a deleted group \"reappears\")",
				b, len(gs), pluralWord(len(gs), "group", "groups")),
			Fix:      fmt.Sprintf("restart broker %s to drop its stale cache (a rolling restart of that pod is enough); do not delete the groups on their coordinators because of this listing", b),
			Commands: []string{"kubectl delete pod " + b + "   # restart; the StatefulSet brings it back", "kaasctl groups list --issue staleOnNonCoordinator" + volumeFlags + brokerFlags}})
	}
	if len(mismatch) > 0 {
		r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckLive, Code: DocWireMismatch, Subjects: mismatch, BlastRadius: len(mismatch),
			Message: fmt.Sprintf("FindCoordinator disagrees with assignment.json for %d %s: the brokers route by another assignment than the file (a rejected stale-epoch file, or a poll not yet done)",
				len(mismatch), pluralWord(len(mismatch), "group", "groups")),
			Fix:      "look for \"assignment.json rejected — stale controller epoch\" in the broker logs and check which controller wrote the file; if it persists past a few seconds, restart the controller pod so a fresh lease writes a new assignment",
			Commands: []string{"kaasctl whois --live --exit-code" + volumeFlags + brokerFlags + " " + shellQuote(mismatch[0]), "kaasctl assignment show" + volumeFlags}})
	}
	if len(f.LookupFailed) > 0 {
		r.Add(DoctorFinding{Severity: volume.SevWarning, Check: CheckLive, Code: DocLookupFailed, Subjects: f.LookupFailed, BlastRadius: len(f.LookupFailed),
			Message:  fmt.Sprintf("FindCoordinator failed for %d %s", len(f.LookupFailed), pluralWord(len(f.LookupFailed), "group", "groups")),
			Fix:      "see the errors with 'kaasctl whois --live'; COORDINATOR_NOT_AVAILABLE means no alive broker can take the group",
			Commands: []string{"kaasctl whois --live" + volumeFlags + brokerFlags + " " + shellQuote(f.LookupFailed[0])}})
	}
	if len(fileOnly) > 0 {
		r.Add(DoctorFinding{Severity: volume.SevInfo, Check: CheckLive, Code: DocFileOnly, Subjects: fileOnly, BlastRadius: len(fileOnly),
			Message: fmt.Sprintf("%d %s only on the volume (committed offsets, no live group): ListGroups and OffsetFetch-all do not see them, so Kafka tools miss them",
				len(fileOnly), pluralWord(len(fileOnly), "group is", "groups are")),
			Fix: "normal for idle groups; to remove one for good, delete its offset file while no consumer uses it (DeleteGroups answers GROUP_ID_NOT_FOUND for an unloaded group and keeps the file)",
			Commands: []string{"kaasctl groups describe" + volumeFlags + brokerFlags + " " + shellQuote(fileOnly[0]),
				"kaasctl offsets reset --group " + shellQuote(fileOnly[0]) + " --all-topics --to-latest" + volumeFlags + brokerFlags + "   # dry run; add --execute"}})
	}
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedMapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
