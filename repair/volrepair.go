package repair

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// QuarantineDir is where volume repair moves files it takes out of kaas's
// way, inside the cluster dir (a dot name: the kaas operator's sweep keeps
// it, and no broker reads it). Nothing is ever deleted. Each run moves
// files into its own sub-directory <time>-<16 random hex digits>, created
// exclusively (mode 0700), so nobody can plant a link at its name
// beforehand; QuarantineDir itself is refused when it is a link or owned
// by another uid.
const QuarantineDir = volume.QuarantineDirName

// Repair actions.
const (
	ActConvert    = "convert"           // plain map → v2 envelope, in place
	ActQuarantine = "quarantine"        // a file kaas cannot decode, moved aside
	ActRemoveTmp  = "remove-tmp"        // a stale *.tmp, moved aside
	ActMigrate    = "migrate"           // legacy DATA/__consumer_offsets/<g>.json → CD
	ActLegacyDup  = "legacy-duplicate"  // legacy file identical to the current one, moved aside
	ActConflict   = "conflict"          // legacy and current files differ: reported, never overwritten
	ActRemoveDir  = "remove-empty-dir"  // the legacy offsets dir, once empty
	ActSkip       = "skip"              // a file repair leaves alone, with the reason: reported, never changed
	ActDenied     = "permission-denied" // a file kaasctl may not read: reported, never changed
)

// RepairAction is one change volume repair makes (or would make).
type RepairAction struct {
	Action string `json:"action"`
	Path   string `json:"path"`
	Group  string `json:"group,omitempty"`
	Detail string `json:"detail"`
	// Dest is where the file went (quarantine, migration target).
	Dest string `json:"dest,omitempty"`
	// Backup is the copy of the old content beside the file (convert).
	Backup string `json:"backup,omitempty"`
	// Salvaged is a --from-file CSV of the offsets kaasctl could still read
	// from a quarantined file.
	Salvaged string `json:"salvaged,omitempty"`
	// Change is false for report-only actions (conflict).
	Change bool   `json:"change"`
	Done   bool   `json:"done"`
	Error  string `json:"error,omitempty"`

	expect  *FileState
	entries []volume.OffsetEntry
	data    []byte // volume migrate: the exact bytes to write
}

// RepairOptions controls RepairVolume.
type RepairOptions struct {
	Execute bool
	// TmpOlderThan: *.tmp files at least this old are stale (default 1h).
	TmpOlderThan time.Duration
	Now          time.Time
	// Policy: --follow-symlinks and --keep-backups.
	Policy Policy
}

// RepairReport is what volume repair found and did.
type RepairReport struct {
	DryRun bool `json:"dryRun"`
	// Quarantine is the directory this run moves files into.
	Quarantine string         `json:"quarantine"`
	Actions    []RepairAction `json:"actions"`
	Changes    int            `json:"changes"`
	Conflicts  int            `json:"conflicts"`
	Failed     int            `json:"failed"`
	// Skipped counts files left alone on purpose (skip actions say why);
	// Denied counts files kaasctl may not read.
	Skipped int `json:"skipped"`
	Denied  int `json:"permissionDenied"`
	// Generation is the kaas generation the repair assumed, and why: only
	// what is broken in that generation is repaired.
	Generation volume.GenerationInfo `json:"generation"`
}

// RepairVolume finds what it can repair on the volume and, with Execute,
// repairs it: every write atomic (WriteFileAtomic), every replaced or
// moved file kept (backup beside it, or moved into the quarantine dir).
// A file that changed since it was read is left alone (ErrConcurrentWrite).
// Running it twice changes nothing the second time.
func RepairVolume(l volume.Layout, opts RepairOptions) (*RepairReport, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.TmpOlderThan <= 0 {
		opts.TmpOlderThan = time.Hour
	}
	l = l.WithGeneration()
	stamp := opts.Now.UTC().Format("20060102T150405Z") + "-" + safefs.RandomSuffix()
	if !opts.Execute {
		stamp = DryRunRunDir // named when the real run writes
	}
	rep := &RepairReport{DryRun: !opts.Execute, Quarantine: filepath.Join(l.ClusterDir, QuarantineDir, stamp), Actions: []RepairAction{}, Generation: l.Gen}
	vr := &volRepair{l: l, opts: opts, gi: l.Gen, quarantine: rep.Quarantine}
	sr, err := volume.ScanOffsets(l, volume.ScanOptions{Now: opts.Now}, vr.scanItem)
	if err != nil {
		return nil, err
	}
	if vr.undetermined > 0 {
		vr.acts = append(vr.acts, RepairAction{Action: ActSkip, Path: vr.gi.LiveOffsetsDir, Detail: fmt.Sprintf("%d group files in offsets dirs whose role cannot be told (%s): nothing is moved, merged or removed across the dirs until the kaas version is pinned (--kaas-version)", vr.undetermined, vr.gi.Evidence)})
		if vr.acts[len(vr.acts)-1].Path == "" {
			vr.acts[len(vr.acts)-1].Path = l.FollowedOffsetsDir()
		}
	}
	// Legacy files (Rust 0.2.18 only): migrate, or set aside duplicates,
	// or report conflicts.
	for _, li := range vr.legacy {
		vr.acts = append(vr.acts, vr.legacyAction(li))
	}
	seen := vr.staleTmps(append(slices.Clone(sr.Findings), volume.TmpFindings(l, opts.Now)...))
	vr.specialFiles(sr.Findings, seen)
	if sr.LegacyDir != "" {
		rest := legacyLeft(sr.LegacyDir, vr.acts)
		if rest == 0 {
			vr.acts = append(vr.acts, RepairAction{Action: ActRemoveDir, Path: sr.LegacyDir, Change: true,
				Detail: "the legacy offsets dir is empty once its files are migrated or moved aside (the kaas operator deletes it anyway)"})
		}
	}
	slices.SortStableFunc(vr.acts, func(a, b RepairAction) int {
		if a.Action == ActRemoveDir || b.Action == ActRemoveDir { // always last
			return boolCmp(a.Action == ActRemoveDir, b.Action == ActRemoveDir)
		}
		return strings.Compare(a.Path, b.Path)
	})
	vr.execute(rep)
	rep.Actions = vr.acts
	return rep, nil
}

// volRepair is one RepairVolume run: what it assumes, the actions planned
// so far, and what the scan set aside for later steps (legacy files, the
// count of files in offsets dirs whose role cannot be told).
type volRepair struct {
	l            volume.Layout
	opts         RepairOptions
	gi           volume.GenerationInfo
	quarantine   string // this run's quarantine dir
	acts         []RepairAction
	legacy       []legacyItem
	undetermined int
}

// legacyItem is a readable group file in the legacy offsets dir.
type legacyItem struct {
	group, path string
	file        *volume.OffsetFile
}

// qpath is where p goes in the quarantine dir: its path below the cluster
// dir, or the data dir (under data-dir/), else its name under other/.
func (vr *volRepair) qpath(p string) string {
	l := vr.l
	if rel, err := filepath.Rel(l.ClusterDir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(vr.quarantine, rel)
	}
	if l.DataDir != "" {
		if rel, err := filepath.Rel(l.DataDir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(vr.quarantine, "data-dir", rel)
		}
	}
	return filepath.Join(vr.quarantine, "other", filepath.Base(p))
}

// skip plans leaving a scanned file alone, saying why.
func (vr *volRepair) skip(it *volume.OffsetScanItem, why string) {
	vr.acts = append(vr.acts, RepairAction{Action: ActSkip, Path: it.Path, Group: it.Group, Detail: why})
}

// scanItem plans what to do with one file of the offsets dirs: nothing for
// a file repair may not or need not touch (said why), quarantine for one
// kaas cannot decode, and otherwise what its dir's role calls for.
func (vr *volRepair) scanItem(it *volume.OffsetScanItem) error {
	if it.InSubdir {
		vr.skip(it, "in a sub-directory of the offsets dir: kaas lists only the top level and never writes there; repair does not move or rename group files (rename the group in its consumers, then 'kaasctl offsets reset --from-file')")
		return nil
	}
	if len(it.NameProblems) > 0 {
		vr.skip(it, "group id kaas cannot round-trip ("+strings.Join(it.NameProblems, "; ")+"); repair does not rename group files")
		return nil
	}
	if it.Denied {
		vr.acts = append(vr.acts, RepairAction{Action: ActDenied, Path: it.Path, Group: it.Group, Detail: it.Err.Problem + "; " + volume.FixPermissionDenied})
		return nil
	}
	st, err := ReadState(it.Path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			vr.acts = append(vr.acts, RepairAction{Action: ActDenied, Path: it.Path, Group: it.Group, Detail: "permission denied: " + err.Error() + "; " + volume.FixPermissionDenied})
			return nil
		}
		vr.skip(it, "cannot read it: "+err.Error())
		return nil
	}
	if !st.Exists {
		return nil // removed since the listing
	}
	of, fs, perr := volume.ParseOffsetFile(it.Path, st.Data)
	fs = vr.gi.AdjustOffsetFindings(of, fs)
	if perr != nil || hasDecodeError(fs) {
		vr.acts = append(vr.acts, vr.quarantineAction(it, &st, of, perr, fs))
		return nil
	}
	vr.byRole(it, &st, of)
	return nil
}

// quarantineAction moves a file kaas cannot decode aside, saving the
// offsets that can still be read as a --from-file CSV.
func (vr *volRepair) quarantineAction(it *volume.OffsetScanItem, st *FileState, of *volume.OffsetFile, perr error, fs []volume.Finding) RepairAction {
	why := ""
	if perr != nil {
		why = perr.(*volume.FileError).Problem
	} else {
		why = firstDecodeError(fs)
	}
	a := RepairAction{Action: ActQuarantine, Path: it.Path, Group: it.Group, Change: true, expect: st,
		Dest: vr.qpath(it.Path), Detail: "kaas cannot decode it (" + why + ")"}
	if of != nil {
		a.entries = usable(of.Entries)
		if len(a.entries) > 0 {
			a.Salvaged = filepath.Join(filepath.Dir(a.Dest), safefs.ShortName("", filepath.Base(a.Dest), ".salvaged.csv")) // within NAME_MAX
			a.Detail += fmt.Sprintf("; %d readable offsets saved as a --from-file CSV", len(a.entries))
		}
	}
	return a
}

// byRole plans what a readable group file needs by the role of its dir in
// the volume's generation: legacy files are kept for legacyAction, files of
// dirs the brokers do not read (or migrate themselves, or whose role cannot
// be told) are left alone, and a plain map in the live dir is converted
// when the generation reads it as EMPTY.
func (vr *volRepair) byRole(it *volume.OffsetScanItem, st *FileState, of *volume.OffsetFile) {
	gi := vr.gi
	switch it.Layout {
	case volume.OffsetsLegacy:
		vr.legacy = append(vr.legacy, legacyItem{it.Group, it.Path, of})
		return
	case volume.OffsetsNotRead:
		vr.skip(it, "Go / Rust ≤ 0.2.15 brokers never read this dir ("+gi.Assumes()+"); repair does not move or delete its files (pin --kaas-version if the brokers are newer)")
		return
	case volume.OffsetsPreMigration:
		vr.skip(it, "the 0.2.16–0.2.17 broker migrates this dir at boot ("+gi.Assumes()+"); repair leaves it to the broker")
		return
	case volume.OffsetsUndetermined:
		vr.undetermined++
		if of.Format == volume.FormatPlainMap {
			vr.skip(it, "plain map on a volume whose generation cannot be told ("+gi.Evidence+"): not converted; pin --kaas-version")
		}
		return
	}
	if of.Format != volume.FormatPlainMap {
		return
	}
	isOffsets, known := gi.PlainMapVerdict()
	switch {
	case !known:
		vr.skip(it, fmt.Sprintf("plain map with %d offsets: Go / Rust ≤ 0.2.17 brokers read it as offsets, 0.2.18 as EMPTY, and the generation is undetermined (%s); generation-dependent fix skipped: rerun with --kaas-version 0.2.18 to convert it if the brokers run 0.2.18", len(of.Entries), gi.Evidence))
	case !isOffsets:
		vr.acts = append(vr.acts, RepairAction{Action: ActConvert, Path: it.Path, Group: it.Group, Change: true, expect: st, entries: of.Entries,
			Detail: fmt.Sprintf("plain map with %d offsets (Rust 0.2.18 reads it as EMPTY; %s) → v2 envelope", len(of.Entries), gi.Assumes())})
	}
	// Go / Rust ≤ 0.2.17 read plain maps as offsets: nothing is broken.
}

// legacyAction plans a legacy group file (Rust 0.2.18 reads only the live
// dir): migrated when the live dir has no file for the group, moved aside
// when the live file holds the same offsets, a conflict (nothing changed)
// when it holds others.
func (vr *volRepair) legacyAction(li legacyItem) RepairAction {
	gi := vr.gi
	cur, perr := GroupFilePath(vr.l, li.group)
	if perr != nil {
		return RepairAction{Action: ActSkip, Path: li.path, Group: li.group, Detail: perr.Error()}
	}
	if sameFile(li.path, cur) { // one file reached two ways: never move it onto itself
		return RepairAction{Action: ActSkip, Path: li.path, Group: li.group, Detail: "the same file as " + cur + " (one directory spelled two ways); left alone"}
	}
	lst, _ := ReadState(li.path)
	cst, err := ReadState(cur)
	if err != nil {
		return RepairAction{Action: ActSkip, Path: li.path, Group: li.group, Detail: "cannot read " + cur + ": " + err.Error()}
	}
	if !cst.Exists {
		return RepairAction{Action: ActMigrate, Path: li.path, Group: li.group, Change: true, Dest: cur, Backup: vr.qpath(li.path), expect: &lst, entries: li.file.Entries,
			Detail: fmt.Sprintf("%d offsets → the live dir, where Rust 0.2.18 brokers read them (%s); the legacy file is moved aside", len(li.file.Entries), gi.Assumes())}
	}
	cof, _, cerr := volume.ParseOffsetFile(cur, cst.Data)
	if cerr == nil && sameEntries(cof.Entries, li.file.Entries) {
		return RepairAction{Action: ActLegacyDup, Path: li.path, Group: li.group, Change: true, Dest: vr.qpath(li.path), expect: &lst,
			Detail: "same offsets as " + cur + "; the legacy copy is moved aside (" + gi.Assumes() + ")"}
	}
	return RepairAction{Action: ActConflict, Path: li.path, Group: li.group, Dest: cur,
		Detail: fmt.Sprintf("the group also has %s with different offsets (legacy %s, live %s); Rust 0.2.18 brokers read only the live one (%s); nothing was changed: compare them and reset with 'kaasctl offsets reset --from-file' if the legacy ones are right", cur, summarize(li.file.Entries), summarizeFile(cof), gi.Assumes())}
}

// staleTmps plans moving aside the temp files the findings name, wherever
// kaas writes, that are regular files at least TmpOlderThan old (an
// interrupted write). It returns the paths it looked at.
func (vr *volRepair) staleTmps(finds []volume.Finding) map[string]bool {
	seen := map[string]bool{}
	for _, f := range finds {
		if f.Code != volume.CodeStaleTmp && f.Code != volume.CodeInFlightTmp {
			continue
		}
		if seen[f.Path] {
			continue
		}
		seen[f.Path] = true
		st, err := os.Lstat(f.Path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		age := vr.opts.Now.Sub(st.ModTime())
		if age < vr.opts.TmpOlderThan {
			continue
		}
		fst, err := ReadState(f.Path)
		if err != nil {
			continue
		}
		vr.acts = append(vr.acts, RepairAction{Action: ActRemoveTmp, Path: f.Path, Change: true, Dest: vr.qpath(f.Path), expect: &fst,
			Detail: fmt.Sprintf("stale temporary file, %s old (an interrupted write); moved aside", ageText(age))})
	}
	return seen
}

// specialFiles lists what volume check reports in the offsets dirs and
// repair never touches: FIFOs, devices and sockets named <group>.json, and
// links. Listed as skipped, with why and what to do, so the user is not
// told "nothing to repair" about a file check called an error.
func (vr *volRepair) specialFiles(finds []volume.Finding, seen map[string]bool) {
	for _, f := range finds {
		if seen[f.Path] {
			continue
		}
		switch f.Code {
		case volume.CodeNotRegular:
			seen[f.Path] = true
			vr.acts = append(vr.acts, RepairAction{Action: ActSkip, Path: f.Path, Group: groupOfPath(f.Path),
				Detail: strings.TrimPrefix(f.Message, "is a ") + "; repair never opens, moves or removes special files: remove it yourself (rm), a broker writes a regular file on the group's next commit"})
		case volume.CodeSymlink:
			seen[f.Path] = true
			vr.acts = append(vr.acts, RepairAction{Action: ActSkip, Path: f.Path, Group: groupOfPath(f.Path),
				Detail: f.Message + "; repair never follows, moves or removes links: replace it with the real file or remove it yourself"})
		}
	}
}

// execute counts the planned actions into rep and, with Execute, applies
// each change in order. A change that would go through a link inside the
// volume (unless --follow-symlinks) is refused already in the plan.
func (vr *volRepair) execute(rep *RepairReport) {
	wc := &repairCtx{l: vr.l, pol: vr.opts.Policy, now: vr.opts.Now, runDir: rep.Quarantine}
	defer func() { wc.run.Close() }()
	for i := range vr.acts {
		a := &vr.acts[i]
		if a.Change && a.Action != ActRemoveDir {
			vr.refuseLinks(a)
		}
		if !vr.opts.Execute && a.Error != "" {
			rep.Failed++
		}
		switch {
		case a.Change:
			rep.Changes++
		case a.Action == ActSkip:
			rep.Skipped++
		case a.Action == ActDenied:
			rep.Denied++
		default:
			rep.Conflicts++
		}
		if !vr.opts.Execute || !a.Change {
			continue
		}
		if a.Error != "" { // refused at planning (a link in the way)
			rep.Failed++
			continue
		}
		if err := applyRepair(a, wc); err != nil {
			a.Error = err.Error()
			rep.Failed++
			continue
		}
		a.Done = true
	}
}

// refuseLinks sets a's error when its path or destination (outside this
// run's quarantine dir) would be written through a link.
func (vr *volRepair) refuseLinks(a *RepairAction) {
	for _, p := range []string{a.Path, a.Dest} {
		if p == "" || strings.HasPrefix(p, vr.quarantine+string(filepath.Separator)) {
			continue
		}
		if err := CheckWritePath(VolumeRoot(vr.l, p), p, vr.opts.Policy); err != nil && a.Error == "" {
			a.Error = err.Error()
		}
	}
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// legacyLeft counts the files that would remain in the legacy dir.
func legacyLeft(dir string, acts []RepairAction) int {
	moving := map[string]bool{}
	for _, a := range acts {
		if a.Change && a.Action != ActConvert && a.Action != ActRemoveDir {
			moving[a.Path] = true
		}
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !moving[p] {
			n++
		}
		return nil
	})
	return n
}

// repairCtx is what the writes of one repair run share.
type repairCtx struct {
	l      volume.Layout
	pol    Policy
	now    time.Time
	runDir string // CD/.kaasctl-quarantine/<time>-<random>
	run    *safefs.Dir
}

// opts are the WriteOptions of a write to path.
func (wc *repairCtx) opts(path string, expect *FileState, backup bool) WriteOptions {
	return WriteOptions{Expect: expect, Backup: backup, Now: func() time.Time { return wc.now }, Root: VolumeRoot(wc.l, path), Policy: wc.pol}
}

// quarantineDir opens (creating) the directory dst lies in, below this
// run's quarantine dir; the run dir is created exclusively on first use.
func (wc *repairCtx) quarantineDir(dst string) (*safefs.Dir, error) {
	if wc.run == nil {
		// The cluster dir is reached from the volume root without links,
		// whatever --follow-symlinks says: files are never moved wherever
		// a link points.
		cd, err := wc.l.OpenWriteDir(wc.l.ClusterDir, false)
		if err != nil {
			var ke *safefs.KindError
			if errors.As(err, &ke) && ke.Kind == "symbolic link" {
				return nil, fmt.Errorf("%s is a symbolic link (to %s); kaasctl never moves files through a link (they would land wherever it points): replace the link with the directory it points to and run again", ke.Path, ke.Target)
			}
			return nil, err
		}
		defer cd.Close()
		q, err := cd.MkdirOwned(QuarantineDir, 0o700)
		if err != nil {
			var ke *safefs.KindError
			if errors.As(err, &ke) && ke.Kind == "symbolic link" {
				// --follow-symlinks does not apply: files are never moved
				// wherever a link points.
				return nil, fmt.Errorf("%s is a symbolic link (to %s); kaasctl never moves files through a link (they would land wherever it points): remove the link and run again", ke.Path, ke.Target)
			}
			return nil, fmt.Errorf("the quarantine dir: %w", err)
		}
		defer q.Close()
		run, err := q.MkdirExcl(filepath.Base(wc.runDir), 0o700)
		if err != nil {
			return nil, fmt.Errorf("creating this run's quarantine dir: %w", err)
		}
		wc.run = run
	}
	rel, err := filepath.Rel(wc.runDir, filepath.Dir(dst))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s is not inside %s", dst, wc.runDir)
	}
	return wc.run.MkdirAllBelow(rel, 0o700)
}

// mkdirFor creates the directories of a volume file that does not exist
// yet, below its volume root, without following links.
func (wc *repairCtx) mkdirFor(path string) error {
	root := VolumeRoot(wc.l, path)
	if root == "" || wc.pol.FollowSymlinks {
		return os.MkdirAll(filepath.Dir(path), 0o755)
	}
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil {
		return err
	}
	r, err := safefs.OpenDir(root)
	if err != nil {
		return err
	}
	defer r.Close()
	d, err := r.MkdirAllBelow(rel, 0o755)
	if err != nil {
		return err
	}
	return d.Close()
}

func applyRepair(a *RepairAction, wc *repairCtx) error {
	switch a.Action {
	case ActConvert:
		res, err := WriteFileAtomic(a.Path, EncodeEnvelope(a.entries), wc.opts(a.Path, a.expect, true))
		a.Backup = res.Backup
		if err != nil {
			return err
		}
		if v := VerifyFile(a.Path, a.entries); !v.OK() {
			return fmt.Errorf("%s: the converted file does not verify", a.Path)
		}
		return nil
	case ActQuarantine, ActRemoveTmp, ActLegacyDup:
		if a.Salvaged != "" {
			var buf bytes.Buffer
			rows := make([]PlanRow, 0, len(a.entries))
			for _, e := range a.entries {
				rows = append(rows, PlanRow{Topic: e.Topic, Partition: e.Partition, New: e.Offset})
			}
			if err := ExportCSV(&buf, rows, false); err != nil {
				return err
			}
			d, err := wc.quarantineDir(a.Salvaged)
			if err != nil {
				return err
			}
			d.Close()
			if _, err := WriteFileAtomic(a.Salvaged, buf.Bytes(), WriteOptions{Expect: &FileState{Path: a.Salvaged}, Perm: 0o600, Root: VolumeRoot(wc.l, a.Salvaged)}); err != nil {
				return err
			}
		}
		return wc.moveAside(a.Path, a.Dest, a.expect)
	case ActMigrate:
		return wc.migrateFile(a, EncodeEnvelope(a.entries))
	case ActRemoveDir:
		return wc.removeEmptyDir(a.Path)
	}
	return fmt.Errorf("unknown action %q", a.Action)
}

// migrateFile writes data as a.Dest, a group file that must not exist yet,
// from the file a.Path (re-checked against what was planned), verifies the
// written file byte for byte and by its offsets, then moves a.Path to
// a.Backup and verifies that copy. Every read is of regular files only,
// without following links unless the policy does. Shared by volume
// repair (0.2.18's leftover legacy dir) and volume migrate.
func (wc *repairCtx) migrateFile(a *RepairAction, data []byte) error {
	if sameFile(a.Path, a.Dest) {
		return fmt.Errorf("%s and %s are one file; not moved onto itself", a.Path, a.Dest)
	}
	if err := wc.mkdirFor(a.Dest); err != nil {
		return err
	}
	cur, err := readState(a.Path, wc.pol.FollowSymlinks)
	if err != nil || !cur.Same(*a.expect) {
		return fmt.Errorf("%s: %w", a.Path, ErrConcurrentWrite)
	}
	missing := FileState{Path: a.Dest}
	if _, err := WriteFileAtomic(a.Dest, data, wc.opts(a.Dest, &missing, false)); err != nil {
		return err
	}
	got, err := readState(a.Dest, wc.pol.FollowSymlinks)
	if err != nil {
		return fmt.Errorf("%s: re-reading after the write: %w", a.Dest, err)
	}
	if !bytes.Equal(got.Data, data) {
		return fmt.Errorf("%s: the written file does not match byte for byte; the source is kept at %s", a.Dest, a.Path)
	}
	if v := verifyFile(a.Dest, a.entries, wc.pol.FollowSymlinks); !v.OK() {
		return fmt.Errorf("%s: the written offsets do not verify; the source is kept at %s", a.Dest, a.Path)
	}
	return wc.moveAsideVerified(a.Path, a.Backup, a.expect)
}

// moveAsideVerified is moveAside, then a re-read of the moved copy, which
// must hold the planned bytes.
func (wc *repairCtx) moveAsideVerified(src, dst string, expect *FileState) error {
	if err := wc.moveAside(src, dst, expect); err != nil {
		return err
	}
	got, err := readState(dst, false)
	if err != nil {
		return fmt.Errorf("%s: re-reading the moved copy: %w", dst, err)
	}
	if !bytes.Equal(got.Data, expect.Data) {
		return fmt.Errorf("%s: the moved copy does not match the source byte for byte", dst)
	}
	return nil
}

// removeEmptyDir removes an empty directory of the volume, reached
// without following links, and syncs its parent.
func (wc *repairCtx) removeEmptyDir(path string) error {
	parent, err := safefs.OpenBelow(VolumeRoot(wc.l, filepath.Dir(path)), filepath.Dir(path), wc.pol.FollowSymlinks, true)
	if err != nil {
		return err
	}
	defer parent.Close()
	if err := parent.RemoveDir(filepath.Base(path)); err != nil {
		return err
	}
	return parent.Sync()
}

// moveAside moves src (a file of the volume) to dst (in this run's
// quarantine dir) without ever overwriting dst and without a moment where
// the content exists nowhere: hard link (or an exclusive copy with the
// same owner and mode, fsynced), fsync, then unlink src; both directories
// fsynced. Neither side is reached through a link. It aborts if src
// changed since expect was read.
func (wc *repairCtx) moveAside(src, dst string, expect *FileState) error {
	sdir, sbase := splitPath(src)
	sd, err := safefs.OpenBelow(VolumeRoot(wc.l, sdir), sdir, wc.pol.FollowSymlinks, true)
	if err != nil {
		return err
	}
	defer sd.Close()
	data, info, err := sd.ReadFile(sbase, true)
	if err != nil {
		return err
	}
	if expect != nil && !expect.Same(FileState{Exists: true, Data: data}) {
		return fmt.Errorf("%s: %w", src, ErrConcurrentWrite)
	}
	dd, err := wc.quarantineDir(dst)
	if err != nil {
		return err
	}
	defer dd.Close()
	dbase := filepath.Base(dst)
	if err := sd.Link(sbase, dd, dbase); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: already exists; not overwritten", dst)
		}
		if err := copyExcl(dd, dbase, data, info); err != nil {
			return err
		}
	}
	if err := dd.Sync(); err != nil {
		return err
	}
	if err := sd.Remove(sbase); err != nil {
		return fmt.Errorf("%s: copied to %s, but removing it failed: %w", src, dst, err)
	}
	return sd.Sync()
}

// copyExcl writes data as the new file name in d, with info's owner and
// mode, synced; a failure removes it.
func copyExcl(d *safefs.Dir, name string, data []byte, info safefs.Info) error {
	out, err := d.Create(name, 0o600)
	if err != nil {
		return err
	}
	err = fileOwner{set: true, uid: info.UID, gid: info.GID, mode: info.Mode.Perm()}.apply(out)
	if err == nil {
		_, err = out.Write(data)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.Remove(name)
	}
	return err
}

// sameFile reports whether a and b are one file (os.SameFile), whatever
// their spelling; false when either cannot be stat'ed.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(sa, sb)
}

func hasDecodeError(fs []volume.Finding) bool { return firstDecodeError(fs) != "" }

func firstDecodeError(fs []volume.Finding) string {
	for _, f := range fs {
		if f.Severity == volume.SevError && f.Code != volume.CodeOffsetsPlainMap {
			return f.Message
		}
	}
	return ""
}

// usable keeps entries a consumer could use (offset >= 0).
func usable(es []volume.OffsetEntry) []volume.OffsetEntry {
	var out []volume.OffsetEntry
	for _, e := range es {
		if e.Offset >= 0 {
			out = append(out, e)
		}
	}
	return out
}

func sameEntries(a, b []volume.OffsetEntry) bool {
	return slices.Equal(a, b)
}

func summarize(es []volume.OffsetEntry) string {
	parts := make([]string, 0, len(es))
	for i, e := range es {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("… %d more", len(es)-4))
			break
		}
		parts = append(parts, e.Topic+"/"+strconv.Itoa(int(e.Partition))+"="+strconv.FormatInt(e.Offset, 10))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func summarizeFile(of *volume.OffsetFile) string {
	if of == nil {
		return "unreadable"
	}
	return summarize(of.Entries)
}

func ageText(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return d.Round(time.Second).String()
}

// groupOfPath is the group id of an offsets-dir entry named <group>.json
// ("" for other names).
func groupOfPath(p string) string {
	name := filepath.Base(p)
	if !strings.HasSuffix(name, ".json") {
		return ""
	}
	return strings.TrimSuffix(name, ".json")
}

// ExitErr is the repair run's exit: an error when a repair failed, exit 3
// for conflicts or files kaasctl may not read.
func (rep *RepairReport) ExitErr() error {
	if rep.Failed > 0 {
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d repair(s) failed; see RESULT", rep.Failed)}
	}
	if rep.Conflicts > 0 || rep.Denied > 0 {
		return exit.ProblemsFound("%d conflicts, %d unreadable files", rep.Conflicts, rep.Denied)
	}
	return nil
}
