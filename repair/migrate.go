package repair

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Migration actions (besides ActMigrate, ActConflict, ActSkip, ActDenied,
// ActRemoveDir of volume repair).
const (
	// ActAlreadyMigrated: the target already holds the same offsets; the
	// source file is moved into the backup dir.
	ActAlreadyMigrated = "already-migrated"
)

// DefaultQuietPeriod is how long the old offsets dir must have been left
// alone before a migration: a file written more recently means a broker is
// probably still committing there.
const DefaultQuietPeriod = 5 * time.Minute

// MigrateOptions controls MigrateVolume.
type MigrateOptions struct {
	// To is the generation to migrate to (only Gen018 is supported).
	To      volume.Generation
	Execute bool
	Now     time.Time
	// QuietPeriod: a group file or temp file in the old dir modified less
	// than this long ago refuses the migration (live groups). 0 checks
	// nothing (the operator knows every old broker is stopped); negative:
	// DefaultQuietPeriod.
	QuietPeriod time.Duration
	// Policy: links inside the volume (refused unless it follows them).
	Policy Policy
}

// MigrateReport is what volume migrate found and did.
type MigrateReport struct {
	DryRun bool `json:"dryRun"`
	// Generation is the generation the volume was found (or pinned) to be.
	Generation volume.GenerationInfo `json:"generation"`
	To         string                `json:"to"`
	// Source is the old live offsets dir (DATA/__consumer_offsets), Target
	// the new one (CD/__consumer_offsets), Backup where the source files go.
	Source  string         `json:"source"`
	Target  string         `json:"target"`
	Backup  string         `json:"backup"`
	Actions []RepairAction `json:"actions"`
	// NothingToDo: the old dir holds no group files (already migrated).
	NothingToDo bool `json:"nothingToDo"`
	Changes     int  `json:"changes"`
	Conflicts   int  `json:"conflicts"`
	Skipped     int  `json:"skipped"`
	Denied      int  `json:"permissionDenied"`
	Failed      int  `json:"failed"`
	// Refused says why nothing may be written (live groups); empty otherwise.
	Refused string `json:"refused,omitempty"`
}

// MigrateUsageError is a migration kaasctl does not do for this volume
// (wrong generation, one directory, no data dir): a usage error.
type MigrateUsageError struct{ Msg string }

func (e *MigrateUsageError) Error() string { return e.Msg }

// MigrateRefusedError is a migration refused for safety (exit 4).
type MigrateRefusedError struct{ Msg string }

func (e *MigrateRefusedError) Error() string { return e.Msg }

// CheckMigrationTarget validates --to against the volume model's rows:
// kaasctl migrates only to a generation whose row says it does.
func CheckMigrationTarget(g volume.Generation) error {
	s, ok := g.Spec()
	switch {
	case ok && s.Migrate.MigrateTo:
		return nil
	case ok:
		return &MigrateUsageError{s.Migrate.ToRefusal}
	}
	return &MigrateUsageError{"--to is required: kaasctl migrates to 0.2.18 (--to 0.2.18)"}
}

// DryRunRunDir stands for the quarantine run dir in a dry-run's paths: the
// real run names it <UTC time>-<random suffix> when it writes.
const DryRunRunDir = "<time>-<random>"

// MigrateVolume moves a Go-generation volume's live offsets dir
// (DATA/__consumer_offsets) into the cluster dir (CD/__consumer_offsets),
// where Rust 0.2.16+ brokers read them: an explicit upgrade step, never a
// repair. It merges (a group already in the target with the same offsets
// is not rewritten; one with different offsets is a conflict, never
// overwritten), converts plain maps to the envelope 0.2.18 reads, verifies
// every written file byte for byte, and keeps every source file (moved
// into the backup dir). Running it again finds nothing to do.
func MigrateVolume(l volume.Layout, opts MigrateOptions) (*MigrateReport, error) {
	if err := CheckMigrationTarget(opts.To); err != nil {
		return nil, err
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.QuietPeriod < 0 {
		opts.QuietPeriod = DefaultQuietPeriod
	}
	l = l.WithGeneration()
	stamp := opts.Now.UTC().Format("20060102T150405Z") + "-" + safefs.RandomSuffix()
	if !opts.Execute {
		// The run's dir is named when it runs (the time then and a random
		// suffix): a dry-run names its form, not a dir that will not exist.
		stamp = DryRunRunDir
	}
	rep := &MigrateReport{DryRun: !opts.Execute, Generation: l.Gen, To: opts.To.String(), Actions: []RepairAction{},
		Source: l.LiveOffsetsDirOf(volume.GenGo), Target: l.LiveOffsetsDirOf(opts.To)}
	srcLoc, _ := volume.LiveOffsetsLocation(volume.GenGo)
	rep.Backup = filepath.Join(l.ClusterDir, QuarantineDir, stamp, srcLoc.QuarantineRel())
	if l.DataDir == "" {
		return nil, &MigrateUsageError{"the data dir is unknown (only --cluster-dir given): the Go generation's offsets are in DATA/__consumer_offsets; pass --data-dir"}
	}
	if l.Gen.SameDir || volume.SameDir(rep.Source, rep.Target) {
		return nil, &MigrateUsageError{fmt.Sprintf("the data dir and the cluster dir are one directory (%s): there is one offsets dir and nothing to migrate", rep.Target)}
	}
	ents, err := os.ReadDir(rep.Source)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", rep.Source, err)
	}
	var groups []string
	var others []fs.DirEntry
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".json") && e.Type().IsRegular() {
			groups = append(groups, strings.TrimSuffix(n, ".json"))
		} else {
			others = append(others, e)
		}
	}
	if len(groups) == 0 {
		rep.NothingToDo = true
		return rep, nil
	}
	if err := migratableGeneration(l.Gen, rep.Source); err != nil {
		return nil, err
	}
	if recent := recentWrites(rep.Source, ents, opts); len(recent) > 0 {
		rep.Refused = fmt.Sprintf("files in %s were written less than %s ago (or at a time in the future, which proves no quiet period): %s; a Go-generation broker is probably still committing there (live groups). Stop every broker of the old generation, wait %s, then rerun",
			rep.Source, opts.QuietPeriod, strings.Join(recent, ", "), opts.QuietPeriod)
	}
	planMigration(rep, groups, others)
	if !opts.Execute || rep.Refused != "" {
		return rep, nil
	}
	wc := &repairCtx{l: l, pol: opts.Policy, now: opts.Now, runDir: filepath.Join(l.ClusterDir, QuarantineDir, stamp)}
	defer func() { wc.run.Close() }()
	return rep, executeMigration(rep, wc)
}

// migratableGeneration refuses a migration the volume's generation does
// not call for: only a generation whose row in the volume model has no
// refusal for a migration from it is migrated (one whose generation is
// ambiguous is refused until pinned; one that is undetermined, or whose
// brokers migrate themselves or need none, is a usage error).
func migratableGeneration(gi volume.GenerationInfo, source string) error {
	spec, known := gi.Gen.Spec()
	switch {
	case known && spec.Migrate.FromRefusal == "":
		return nil
	case gi.Ambiguous:
		return &MigrateRefusedError{"both offsets dirs hold group files (" + gi.Evidence + "): kaasctl cannot tell which one the brokers read and migrates nothing until the version is pinned; if the brokers still run Go / Rust ≤ 0.2.15, rerun with --kaas-version go (groups in both dirs with different offsets are then reported as conflicts)"}
	case known:
		return &MigrateUsageError{fmt.Sprintf(spec.Migrate.FromRefusal, source)}
	default:
		return &MigrateUsageError{"the kaas generation is undetermined (" + gi.Evidence + "): pin the version the brokers ran with --kaas-version go"}
	}
}

// recentWrites names the files of the old dir written within the quiet
// period (live groups), or at a time in the future, whose age is unknown
// and so proves no quiet period.
func recentWrites(source string, ents []fs.DirEntry, opts MigrateOptions) []string {
	var recent []string
	for _, e := range ents {
		st, err := os.Lstat(filepath.Join(source, e.Name()))
		if err != nil || st.IsDir() {
			continue
		}
		switch age := opts.Now.Sub(st.ModTime()); {
		case age < -volume.FutureSlack:
			// Its age is unknown: it proves no quiet period.
			recent = append(recent, fmt.Sprintf("%s (modified in the future, %s ahead of this clock)", volume.DisplayName(e.Name()), ageText(-age)))
		case age < opts.QuietPeriod:
			recent = append(recent, fmt.Sprintf("%s (%s ago)", volume.DisplayName(e.Name()), ageText(max(age, 0))))
		}
	}
	return recent
}

// planMigration plans every group file and other entry of the old dir into
// rep, counts the actions, and removes the old dir last when every group
// file in it is to be migrated.
func planMigration(rep *MigrateReport, groups []string, others []fs.DirEntry) {
	var acts []RepairAction
	for _, g := range groups {
		if a, ok := migrationAction(rep, g); ok {
			acts = append(acts, a)
		}
	}
	for _, e := range others {
		acts = append(acts, RepairAction{Action: ActSkip, Path: filepath.Join(rep.Source, e.Name()), Detail: "not a group file (a sub-directory, temp file or other file): left where it is, so the old dir stays"})
	}
	for i := range acts {
		a := &acts[i]
		switch {
		case a.Action == ActSkip:
			rep.Skipped++
		case a.Action == ActDenied:
			rep.Denied++
		case a.Change:
			rep.Changes++
		default:
			rep.Conflicts++
		}
	}
	if len(others) == 0 && rep.Conflicts == 0 && rep.Denied == 0 && rep.Skipped == 0 {
		acts = append(acts, RepairAction{Action: ActRemoveDir, Path: rep.Source, Change: true,
			Detail: "the old offsets dir, once every group file is migrated (0.2.18's operator deletes it anyway)"})
		rep.Changes++
	}
	rep.Actions = acts
}

// migrationAction plans group g's file: migrated into the target (a plain
// map written as the envelope), or, when the target already has the
// group, moved into the backup dir if it holds the same offsets and a
// conflict if not; a file that cannot be read or decoded is not migrated.
// ok is false when the file is gone since the listing.
func migrationAction(rep *MigrateReport, g string) (RepairAction, bool) {
	src := filepath.Join(rep.Source, g+".json")
	dst := filepath.Join(rep.Target, g+".json")
	bak := filepath.Join(rep.Backup, g+".json")
	if ps := volume.NameProblems(g); len(ps) > 0 {
		return RepairAction{Action: ActSkip, Path: src, Group: g, Detail: "group id kaas cannot round-trip (" + strings.Join(ps, "; ") + "): not migrated"}, true
	}
	st, err := ReadState(src)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return RepairAction{Action: ActDenied, Path: src, Group: g, Detail: "permission denied: " + err.Error() + "; " + volume.FixPermissionDenied}, true
		}
		return RepairAction{Action: ActConflict, Path: src, Group: g, Detail: "cannot read it: " + err.Error() + "; not migrated"}, true
	}
	if !st.Exists {
		return RepairAction{}, false
	}
	of, fsn, perr := volume.ParseOffsetFile(src, st.Data)
	if perr != nil || hasDecodeError(fsn) {
		why := firstDecodeError(fsn)
		if perr != nil {
			why = perr.Error()
		}
		return RepairAction{Action: ActConflict, Path: src, Group: g,
			Detail: "no broker can decode it (" + why + "): not migrated; run 'kaasctl volume repair --kaas-version go' to quarantine it (its readable offsets are saved as a --from-file CSV), then rerun"}, true
	}
	want := st.Data
	detail := fmt.Sprintf("%d offsets, copied byte for byte", len(of.Entries))
	if of.Format == volume.FormatPlainMap {
		want = EncodeEnvelope(of.Entries)
		detail = fmt.Sprintf("%d offsets; a plain map (read as offsets by Go brokers, as EMPTY by 0.2.18), written as the v2 envelope", len(of.Entries))
	}
	cst, err := ReadState(dst)
	if err != nil {
		return RepairAction{Action: ActConflict, Path: src, Group: g, Dest: dst, Detail: "cannot read the target: " + err.Error()}, true
	}
	if cst.Exists {
		cof, _, cerr := volume.ParseOffsetFile(dst, cst.Data)
		if bytes.Equal(cst.Data, want) || (cerr == nil && sameEntries(cof.Entries, of.Entries)) {
			return RepairAction{Action: ActAlreadyMigrated, Path: src, Group: g, Change: true, Dest: bak, expect: &st,
				Detail: "the target " + dst + " already holds the same offsets; the source file is moved into the backup dir"}, true
		}
		return RepairAction{Action: ActConflict, Path: src, Group: g, Dest: dst,
			Detail: fmt.Sprintf("the target already holds different offsets (source %s, target %s): never overwritten; compare them, keep the right file, then rerun", summarize(of.Entries), summarizeFile(cof))}, true
	}
	return RepairAction{Action: ActMigrate, Path: src, Group: g, Change: true, Dest: dst, Backup: bak, expect: &st, entries: of.Entries,
		Detail: detail + " into " + rep.Target + " (Go / Rust ≤ 0.2.15 → Rust 0.2.18); the source file is moved into the backup dir", data: want}, true
}

// executeMigration applies the planned changes in order. The sources are
// moved into the quarantine dir once their copy is written, so that dir
// must be makeable before anything is written (a planted link or file
// there must not leave every group in both dirs); the old dir is removed
// only when every step before succeeded.
func executeMigration(rep *MigrateReport, wc *repairCtx) error {
	acts := rep.Actions
	for i := range acts {
		a := &acts[i]
		dst := a.Backup
		if a.Action == ActAlreadyMigrated {
			dst = a.Dest
		}
		if !a.Change || dst == "" || (a.Action != ActMigrate && a.Action != ActAlreadyMigrated) {
			continue
		}
		qd, err := wc.quarantineDir(dst)
		if err != nil {
			for j := range acts {
				if acts[j].Change {
					acts[j].Error = "not done: nothing was written, since the sources could not be set aside: " + err.Error()
					rep.Failed++
				}
			}
			return nil
		}
		qd.Close()
		break
	}
	if err := wc.mkdirFor(filepath.Join(rep.Target, "x")); err != nil {
		return err
	}
	for i := range acts {
		a := &acts[i]
		if !a.Change {
			continue
		}
		if a.Action == ActRemoveDir && rep.Failed > 0 {
			a.Error = "not removed: a migration step failed, so files remain in it"
			continue
		}
		if err := applyMigration(a, wc); err != nil {
			a.Error = err.Error()
			rep.Failed++
			continue
		}
		a.Done = true
	}
	return nil
}

// applyMigration performs one migration action and verifies it.
func applyMigration(a *RepairAction, wc *repairCtx) error {
	switch a.Action {
	case ActMigrate:
		return wc.migrateFile(a, a.data)
	case ActAlreadyMigrated:
		return wc.moveAsideVerified(a.Path, a.Dest, a.expect)
	case ActRemoveDir:
		ents, err := os.ReadDir(a.Path)
		if err != nil {
			return err
		}
		if len(ents) > 0 {
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				names = append(names, e.Name())
			}
			slices.Sort(names)
			return fmt.Errorf("%s is not empty (%s); left in place", a.Path, strings.Join(names, ", "))
		}
		return wc.removeEmptyDir(a.Path)
	}
	return fmt.Errorf("unknown action %q", a.Action)
}

// ExitErr is volume migrate's exit: refused (nothing written), an error
// when a step failed, exit 3 for conflicts or files kaasctl may not read.
func (rep *MigrateReport) ExitErr() error {
	switch {
	case rep.Refused != "":
		return exit.Refusedf("volume migrate refused: %s", rep.Refused)
	case rep.Failed > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d migration step(s) failed; see RESULT (every source file not marked done is still in %s)", rep.Failed, rep.Source)}
	case rep.Conflicts > 0 || rep.Denied > 0:
		return exit.ProblemsFound("%d conflicts, %d unreadable files: resolve them and rerun (nothing was overwritten)", rep.Conflicts, rep.Denied)
	}
	return nil
}

// Migrate is 'volume migrate': the migration planned, refused while a
// broker of brokers accepts connections (within timeout, at most 3s; a
// running Go broker keeps writing the old dir and serves offsets from
// memory), then, with opts.Execute, executed. Errors are the command's
// (MigrateExitErr).
func Migrate(l volume.Layout, opts MigrateOptions, brokers []string, timeout time.Duration) (*MigrateReport, error) {
	execute := opts.Execute
	opts.Execute = false
	rep, err := MigrateVolume(l, opts)
	if err != nil {
		return nil, MigrateExitErr(err)
	}
	refusal := rep.Refused
	if refusal == "" && !rep.NothingToDo && len(brokers) > 0 {
		if up := ReachableBrokers(brokers, min(timeout, 3*time.Second)); len(up) > 0 {
			refusal = fmt.Sprintf("broker(s) %s accept connections: stop every broker of the old generation before migrating (a running Go broker keeps writing %s and serves offsets from memory)", strings.Join(up, ", "), rep.Source)
		}
	}
	if execute && refusal == "" && !rep.NothingToDo {
		opts.Execute = true
		if rep, err = MigrateVolume(l, opts); err != nil {
			return nil, MigrateExitErr(err)
		}
		refusal = rep.Refused
	}
	rep.Refused = refusal
	return rep, nil
}

// MigrateExitErr is an error of MigrateVolume as its exit: a usage error
// or a refusal by its type, else as it is.
func MigrateExitErr(err error) error {
	var ue *MigrateUsageError
	var re *MigrateRefusedError
	switch {
	case errors.As(err, &ue):
		return exit.UsageErrorf("volume migrate: %v", err)
	case errors.As(err, &re):
		return exit.Refusedf("volume migrate refused: %v", err)
	}
	return err
}
