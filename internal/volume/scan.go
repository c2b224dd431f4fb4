package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// Where an offset file was found, as a role under the volume's generation
// (see also OffsetsNotRead, OffsetsPreMigration, OffsetsUndetermined).
const (
	OffsetsCurrent = "current" // the live dir: DATA/__consumer_offsets on GenGo, else CD/__consumer_offsets
	OffsetsLegacy  = "legacy"  // DATA/__consumer_offsets on Rust 0.2.18 only
)

// BackupMarker is in the name of every backup kaasctl writes beside a file
// (<file>.kaasctl-bak-<time>): kaas reads only *.json, so it never takes a
// backup for a group file.
const BackupMarker = ".kaasctl-bak-"

// Finding codes for directories and names.
const (
	CodeLegacyOffsetsDir   = "volume.legacyOffsetsDir"
	CodeStaleTmp           = "volume.staleTmpFile"
	CodeInFlightTmp        = "volume.tmpFile"
	CodeUnknownFile        = "volume.unknownFile"
	CodeKaasctlBackup      = "volume.kaasctlBackup"
	CodeSubdirGroup        = "offsets.groupInSubdirectory"
	CodeUnroundtrippable   = "offsets.unroundtrippableName"
	CodeUnreadableDir      = "volume.unreadableDir"
	CodeSymlink            = "volume.symlink"
	CodeNoOffsetsDir       = "offsets.noOffsetsDir"
	CodeDuplicateGroupFile = "offsets.currentAndLegacyFile"
	// Generation-dependent directory findings.
	CodeAmbiguousGeneration = "volume.ambiguousGeneration"
	CodeGenerationUnknown   = "volume.generationUnknown"
	CodeOffsetsDirNotRead   = "offsets.dirNotRead"
	CodePreMigrationDir     = "offsets.preMigrationDir"
	// CodePermissionDenied: a file kaasctl may not read (EACCES).
	CodePermissionDenied = "file.permissionDenied"
	CodeNotRegular       = "volume.notRegularFile"
	CodeSymlinkedDir     = "volume.symlinkedDir"
)

// FixPermissionDenied is the fix of a file kaasctl may not read.
const FixPermissionDenied = "give the user running kaasctl read access (run it as the brokers' user, or fix the file's owner and mode: ls -l, chown/chmod); kaasctl does not judge or move a file it cannot read"

// DefaultKeepBackups is how many backups per file kaasctl's writes keep
// (--keep-backups, KAASCTL_KEEP_BACKUPS).
const DefaultKeepBackups = 10

// backupFinding sums up kaasctl's backups in one directory.
func backupFinding(dir string, n int, bytes int64) Finding {
	return Finding{Severity: SevInfo, Code: CodeKaasctlBackup, Path: dir,
		Message: fmt.Sprintf("%d kaasctl backup files (%s) from resets, deletes and repairs (<file>%s<time>); kaas ignores them; each write keeps the last %d per file", n, byteSize(bytes), BackupMarker, DefaultKeepBackups),
		Fix:     "delete the ones you no longer need once the changes are verified; --keep-backups N (or KAASCTL_KEEP_BACKUPS) changes how many each write keeps"}
}

// byteSize renders a byte count for messages.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// symlinkFinding reports a link in an offsets dir, with its target; a
// link to anything but a regular file (a FIFO, /dev/zero) is an error.
func symlinkFinding(p string) Finding {
	to, _ := os.Readlink(p)
	f := Finding{Severity: SevWarning, Code: CodeSymlink, Path: p,
		Message: "symbolic link (to " + to + ") in the offsets dir: kaas follows it on read and replaces it with a plain file on the next commit; kaasctl neither reads nor writes through it (writes need --follow-symlinks)",
		Fix:     "replace the link with the file it points to, or remove it"}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		f.Message = "symbolic link to " + to + ", a directory, in the offsets dir: kaas reads only the group files at the top level; kaasctl does not follow it"
		f.Fix = "remove the link, or move the group files it leads to into the offsets dir if they belong there"
	} else if err == nil && !st.Mode().IsRegular() {
		f.Severity = SevError
		f.Message = "symbolic link to " + to + ", a " + safefs.Kind(st.Mode()) + ", in the offsets dir: reading it would block or never end (kaas would hang or run out of memory loading the group); kaasctl does not read it"
		f.Fix = "remove the link (a broker writes a regular file on the group's next commit)"
	}
	return f
}

// FutureSlack is how far ahead of this host's clock a file's time may be
// before kaasctl calls it in the future (hosts' clocks on one NFS volume
// differ by seconds).
const FutureSlack = time.Minute

// CodeFutureModTime: a file modified (or a backup named) later than now.
const CodeFutureModTime = "volume.futureTime"

// FutureModTime is the finding for a file (what) modified later than now
// by more than FutureSlack, with what that breaks (consequence); false
// when its time is not in the future. Its age is unknown: never "0s".
func FutureModTime(p string, mt, now time.Time, what, consequence string) (Finding, bool) {
	if !mt.After(now.Add(FutureSlack)) {
		return Finding{}, false
	}
	return Finding{Severity: SevWarning, Code: CodeFutureModTime, Path: p,
		Message: fmt.Sprintf("%s modified in the future (%s, %s ahead of this host's clock): its age is unknown, not \"just now\"; %s", what, mt.UTC().Format(time.RFC3339), roundAge(mt.Sub(now)), consequence),
		Fix:     "check the clocks of the broker hosts and of this one (NTP); a copy or restore that kept the times does this too"}, true
}

// futureBackupFinding is the one-file form of the future-named backups
// finding.
var futureBackupFinding = Finding{Severity: SevWarning, Code: CodeFutureModTime,
	Message: "a kaasctl backup named for a time in the future: no point in the group's history (a clock that was ahead, or a file kaasctl did not make); a write's pruning removes it first",
	Fix:     "look at it ('kaasctl offsets history' ignores it), then remove it; check the clocks"}

// BackupStampLayout is the time in a backup's name (<file>.kaasctl-bak-<time>[-n]).
const BackupStampLayout = "20060102T150405.000000000Z"

// BackupTime is the time a backup's name carries; false for a name that
// is not a kaasctl backup's.
func BackupTime(name string) (time.Time, bool) {
	i := strings.LastIndex(name, BackupMarker)
	if i < 0 || len(name) < i+len(BackupMarker)+len(BackupStampLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(BackupStampLayout, name[i+len(BackupMarker):i+len(BackupMarker)+len(BackupStampLayout)])
	return t, err == nil
}

// linksToRegular reports whether the link p leads to a regular file (what
// kaas reads a group from when it follows the link).
func linksToRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// notRegularFinding reports a <group>.json that is a FIFO, device or
// socket.
func notRegularFinding(p string, mode os.FileMode) Finding {
	kind := "special file"
	if mode&os.ModeIrregular == 0 {
		kind = safefs.Kind(mode)
	}
	return Finding{Severity: SevError, Code: CodeNotRegular, Path: p,
		Message: "is a " + kind + ", not a regular file: kaasctl does not read it (reading could block forever or never end) and kaas cannot use it as the group's offsets",
		Fix:     "remove it (a broker writes a regular file on the group's next commit); restore the offsets with 'kaasctl offsets reset --from-file' if you have them"}
}

// symlinkedDirFinding reports an offsets dir that is a link.
func symlinkedDirFinding(p string) *Finding { return linkedDirFinding(p, "the offsets dir") }

// linkedDirFinding reports a directory of the volume (what) that is a
// link.
func linkedDirFinding(p, what string) *Finding {
	st, err := os.Lstat(p)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	to, _ := os.Readlink(p)
	return &Finding{Severity: SevWarning, Code: CodeSymlinkedDir, Path: p,
		Message: what + " is a symbolic link (to " + to + "): kaasctl reads through it, but its writes (offsets reset/delete, restores, volume repair and migrate) refuse to write through a link inside the volume, which could have been planted to send them elsewhere",
		Fix:     "replace the link with the directory it points to; or, if the link is yours, pass --follow-symlinks to the writing command"}
}

// StaleTmpAge is how old a *.tmp file must be before kaasctl calls it stale:
// kaas's own writes finish in milliseconds.
const StaleTmpAge = 5 * time.Minute

// OffsetScanItem is one offset file, parsed.
type OffsetScanItem struct {
	// Group is the group id the file name stands for (sub-directories
	// included: "team/a" for team/a.json).
	Group  string
	Path   string
	Layout string // OffsetsCurrent or OffsetsLegacy
	// InSubdir is true for files below a sub-directory of the offsets dir.
	InSubdir bool
	// NameProblems says why kaas cannot round-trip this group id.
	NameProblems []string
	File         *OffsetFile
	// Summary is set instead of File when ScanOptions.SummaryOnly found a
	// clean envelope (Summary.Format != "").
	Summary  OffsetSummary
	Findings []Finding
	Err      *FileError
	// Denied is true when the file could not be read for lack of
	// permission (Err says so): not corrupt, just unreadable to kaasctl.
	Denied bool
	// Linked is true when the file is a symbolic link to a regular file
	// (Err says so): kaas follows it, so the group is live for kaas, but
	// kaasctl reads nothing through a link inside the volume; not corrupt,
	// its offsets are unknown to kaasctl.
	Linked bool
	// ModTime is the file's modification time as of the read (zero when
	// it could not be opened, and with NamesOnly).
	ModTime time.Time
}

// ScanOptions tunes ScanOffsets.
type ScanOptions struct {
	// Workers reading and parsing in parallel; 0 means 2×GOMAXPROCS (the
	// work is mostly waiting on the file system).
	Workers int
	// Window bounds how many results may wait for their turn; 0 means
	// 128×Workers (workers take runs of up to 16 files).
	Window int
	// Now is the clock for tmp-file ages; zero means time.Now().
	Now time.Time
	// NamesOnly skips reading the files (Group, Path, Layout, names only).
	NamesOnly bool
	// ReadGroup, when set, reads only the files of the groups it accepts;
	// the others are items as NamesOnly gives them. Called from the
	// workers at once: it must be safe for concurrent use.
	ReadGroup func(group string) bool
	// SkipGroup, when set, leaves a group's committed offsets out of the
	// checks of CheckVolume (the probe's canaries, which every surface
	// leaves out; the findings about their files are the caller's).
	SkipGroup func(group string) bool
	// OnCounted, with CheckVolume, is given each group's offset file that
	// the brokers load, with the partitions' bounds the check read from the
	// segments (nil without a data dir): the read model checks the
	// committed offsets against the log (observe.OffsetCheck).
	OnCounted func(it *OffsetScanItem, bounds func(topic string, partition int32) *LogBounds)
	// OnListed, when set, is called with the number of files before the
	// first item (to size the caller's buffers).
	OnListed func(files int)
	// SummaryOnly validates clean files and counts their partitions without
	// keeping entries (Summary set, File nil); files with anything odd are
	// still fully parsed so their findings are complete.
	SummaryOnly bool
	// OnItem, when set, sees every item after the scan's callback took it
	// without error, in the same order: a caller of CheckVolume keeps what
	// it needs of each file from the check's own scan instead of a second.
	OnItem func(*OffsetScanItem)

	gen GenerationInfo // set by ScanOffsets for the workers
}

// ScanResult is what a scan saw besides the files themselves.
type ScanResult struct {
	Files    int
	Findings []Finding // directory-level: legacy dir, tmp leftovers, unknown files
	// LegacyDir is DATA/__consumer_offsets when it exists and the
	// volume's generation calls it legacy (Rust 0.2.18 only).
	LegacyDir string
	// Generation is what the scan assumed (the layout's, detected when
	// nobody resolved it).
	Generation GenerationInfo
	// Dirs are the offsets dirs scanned, the live one first, with the
	// group ids found in each.
	Dirs []ScannedDir
}

type scanJob struct {
	group, path, layout string
	inSubdir            bool
	// dir is the offsets dir, open, and name the file's name in it (nil:
	// read by path, as the files of a sub-directory are: group ids with
	// "/", which kaas never writes).
	dir  *safefs.Dir
	name string
}

// closeJobDirs closes the directories jobs read their files in.
func closeJobDirs(jobs []scanJob) {
	var last *safefs.Dir
	for _, j := range jobs {
		if j.dir != nil && j.dir != last {
			j.dir.Close() // Close of a closed Dir is a no-op
			last = j.dir
		}
	}
}

// ScanOffsets lists the offset files of both offsets dirs (the live one of
// the volume's generation first, then the other; each sorted by file name)
// and calls fn for each, in that order, while a bounded pool of workers
// reads and parses ahead. Memory stays bounded by the window, not by the
// total size of the files. fn runs on the caller's goroutine; returning an
// error stops the scan. One directory spelled two ways (the data dir equal
// to the cluster dir, a link) is scanned once.
func ScanOffsets(l Layout, opts ScanOptions, fn func(*OffsetScanItem) error) (ScanResult, error) {
	l = l.WithGeneration()
	gi := l.Gen
	opts.gen = gi
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	res := ScanResult{Generation: gi}
	var jobs []scanJob
	for _, d := range l.OffsetsDirs() {
		if f := symlinkedDirFinding(d.Path); f != nil {
			res.Findings = append(res.Findings, *f)
		}
		st, err := os.Stat(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				res.Findings = append(res.Findings, Finding{Severity: SevError, Code: CodeUnreadableDir, Path: d.Path, Message: "cannot read the offsets dir: " + err.Error(), Fix: "check the volume mount and permissions"})
			}
			continue
		}
		if !st.IsDir() {
			continue
		}
		n := len(jobs)
		jobs = listOffsetDir(d.Path, d.Role, now, &res.Findings, jobs)
		for _, j := range jobs[n:] {
			d.Groups = append(d.Groups, j.group)
		}
		if d.Role == OffsetsLegacy {
			res.LegacyDir = d.Path
		}
		res.Dirs = append(res.Dirs, d)
	}
	res.Findings = append(res.Findings, generationFindings(gi, res.Dirs)...)
	if len(jobs) == 0 && res.LegacyDir == "" {
		// The cluster dir's offsets dir is missing: reported unless the
		// assumed generation keeps its live offsets in the data dir.
		cur := l.Path(locClusterOffsets)
		spec, known := gi.Gen.Spec()
		if _, err := os.Stat(cur); errors.Is(err, fs.ErrNotExist) && !(known && spec.Live().Root == RootData) {
			res.Findings = append(res.Findings, Finding{Severity: SevInfo, Code: CodeNoOffsetsDir, Path: cur, Message: "no offsets dir: no group has committed offsets yet (or this is not the cluster dir)"})
		}
	}
	res.Files = len(jobs)
	if opts.OnListed != nil {
		opts.OnListed(len(jobs))
	}
	defer closeJobDirs(jobs)
	return res, runOrdered(jobs, opts, fn)
}

// generationFindings are the directory-level findings that depend on the
// volume's generation: the ambiguity itself, the 0.2.18 legacy dir with
// the groups it puts at risk, and offsets the assumed generation never reads.
func generationFindings(gi GenerationInfo, dirs []ScannedDir) []Finding {
	var out []Finding
	var live *ScannedDir
	for i := range dirs {
		if dirs[i].Role == OffsetsCurrent {
			live = &dirs[i]
		}
	}
	if gi.Ambiguous && gi.Gen == GenUnknown && len(dirs) == 2 {
		return append(out, ambiguousFinding(dirs[0], dirs[1]))
	}
	if !gi.Ambiguous && gi.Gen == GenUnknown && gi.LiveOffsetsDir == "" {
		out = append(out, Finding{Severity: SevInfo, Code: CodeGenerationUnknown, Path: gi.firstDir(dirs),
			Message: "the kaas generation is undetermined (" + gi.Evidence + "): findings that depend on it are held back and offsets writes refuse until it is known",
			Fix:     pinFix})
	}
	nc := noCopy{live: live}
	for _, d := range dirs {
		i := slices.IndexFunc(otherDirKinds, func(k otherDirKind) bool { return k.role == d.Role })
		if i < 0 || len(d.Groups) == 0 && d.Role != OffsetsLegacy {
			continue
		}
		out = append(out, otherDirKinds[i].finding(gi, d, liveDirName(live), nc.of(d)))
	}
	return out
}

// pinFix is the fix of the findings that need the kaas version pinned.
const pinFix = "pin the kaas version the brokers run: --kaas-version go (Go / Rust ≤ 0.2.15: DATA/__consumer_offsets is live), 0.2.16 or 0.2.18 (CD/__consumer_offsets is live); or KAASCTL_KAAS_VERSION, or kaasVersion in the profile ('kaasctl config set-profile NAME --kaas-version V')"

// ambiguousFinding is the warning for two offsets dirs that both hold
// group files: which groups are in each, in one only, and in both.
func ambiguousFinding(d, c ScannedDir) Finding {
	if c.InData {
		d, c = c, d
	}
	both, onlyD, onlyC := splitGroups(d.Groups, c.Groups)
	return Finding{Severity: SevWarning, Code: CodeAmbiguousGeneration, Path: d.Path,
		Message: fmt.Sprintf("both offsets dirs hold group files, so which kaas generation wrote the volume (and which dir its brokers read) cannot be told: %s has %s (%s) and %s has %s (%s); only in %s: %s; only in %s: %s; in both: %s. Nothing is migrated, repaired or written across the two dirs until the version is pinned",
			d.Path, plural(len(d.Groups), "group"), nameList(d.Groups), c.Path, plural(len(c.Groups), "group"), nameList(c.Groups),
			d.Path, nameList(onlyD), c.Path, nameList(onlyC), nameList(both)),
		Fix: pinFix}
}

// noCopy tells the groups of a dir without a file in the live dir. Its
// set of the live dir's groups is built only for a dir besides the live
// one: most volumes have one dir, and 100,000 names in a set cost a scan
// of them 20 ms.
type noCopy struct {
	live    *ScannedDir
	liveSet map[string]bool
}

// of lists d's groups that have no file in the live dir.
func (n *noCopy) of(d ScannedDir) []string {
	if n.liveSet == nil {
		n.liveSet = map[string]bool{}
		if n.live != nil {
			for _, g := range n.live.Groups {
				n.liveSet[g] = true
			}
		}
	}
	var gs []string
	for _, g := range d.Groups {
		if !n.liveSet[g] {
			gs = append(gs, g)
		}
	}
	return gs
}

// otherDirKind is the finding for an offsets dir besides the live one, of
// one role: what its group files are to the brokers of the generation, and
// what to do about them. missing are its groups without a copy in the
// live dir (named liveName).
type otherDirKind struct {
	role    string
	finding func(gi GenerationInfo, d ScannedDir, liveName string, missing []string) Finding
}

// otherDirKinds are the offsets dirs besides the live one that
// generationFindings reports on (the legacy dir even without groups).
var otherDirKinds = []otherDirKind{
	{OffsetsLegacy, func(gi GenerationInfo, d ScannedDir, liveName string, missing []string) Finding {
		return Finding{Severity: SevWarning, Code: CodeLegacyOffsetsDir, Path: d.Path,
			Message: fmt.Sprintf("legacy offsets dir (%s) with %s: Rust 0.2.18 brokers never read it and the kaas operator deletes it within 5 minutes; groups at risk: %s; of these, without a copy in the live dir %s: %s",
				gi.Assumes(), plural(len(d.Groups), "group file"), nameList(d.Groups), liveName, nameList(missing)),
			Fix: "run 'kaasctl volume repair --execute' (on 0.2.18 it rescues the groups without a copy into the cluster dir, merging and never overwriting; conflicts are reported) before the operator's sweep; if the brokers are older than 0.2.18, pin --kaas-version instead"}
	}},
	{OffsetsNotRead, func(gi GenerationInfo, d ScannedDir, liveName string, missing []string) Finding {
		return Finding{Severity: SevWarning, Code: CodeOffsetsDirNotRead, Path: d.Path,
			Message: fmt.Sprintf("%s holds %s, but %s brokers read only %s (%s): these files are not used (left by a copy or an earlier migration?); groups: %s; not in the live dir: %s",
				d.Path, plural(len(d.Groups), "group file"), gi.Label, liveName, gi.Assumes(), nameList(d.Groups), nameList(missing)),
			Fix: "if the brokers really run Rust ≥ 0.2.16, pin --kaas-version 0.2.16 or 0.2.18; otherwise compare with 'kaasctl groups describe' and remove them by hand once sure (kaasctl leaves them)"}
	}},
	{OffsetsPreMigration, func(gi GenerationInfo, d ScannedDir, _ string, missing []string) Finding {
		return Finding{Severity: SevWarning, Code: CodePreMigrationDir, Path: d.Path,
			Message: fmt.Sprintf("%s holds %s (%s): the 0.2.16–0.2.17 broker migrates this dir into the cluster dir at boot and protects it until then; groups: %s; not yet in the live dir: %s",
				d.Path, plural(len(d.Groups), "group file"), gi.Assumes(), nameList(d.Groups), nameList(missing)),
			Fix: "restart one 0.2.16–0.2.17 broker so its boot shim migrates the dir, and check it is empty before upgrading to 0.2.18 (whose operator deletes it)"}
	}},
}

func (gi GenerationInfo) firstDir(dirs []ScannedDir) string {
	if len(dirs) > 0 {
		return dirs[0].Path
	}
	return gi.LiveOffsetsDir
}

func liveDirName(live *ScannedDir) string {
	if live == nil {
		return "(none)"
	}
	return live.Path
}

// splitGroups returns the groups in both lists, only in a, only in b.
func splitGroups(a, b []string) (both, onlyA, onlyB []string) {
	inB := map[string]bool{}
	for _, g := range b {
		inB[g] = true
	}
	inA := map[string]bool{}
	for _, g := range a {
		inA[g] = true
		if inB[g] {
			both = append(both, g)
		} else {
			onlyA = append(onlyA, g)
		}
	}
	for _, g := range b {
		if !inA[g] {
			onlyB = append(onlyB, g)
		}
	}
	return both, onlyA, onlyB
}

// maxListed caps the group names one message lists.
const maxListed = 20

// nameList shows group ids for a message: quoted-safe, at most maxListed,
// "none" for an empty list.
func nameList(gs []string) string {
	if len(gs) == 0 {
		return "none"
	}
	n := min(len(gs), maxListed)
	out := make([]string, n)
	for i := range n {
		out[i] = DisplayName(gs[i])
	}
	s := strings.Join(out, ", ")
	if len(gs) > n {
		s += fmt.Sprintf(" … and %d more", len(gs)-n)
	}
	return s
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// ScanGroups is ScanOffsets for the named groups only: it looks up each
// group's own file in both layouts instead of listing the directories, so
// describing one group on a 100,000-file volume reads one file. ok is false
// when a name cannot be looked up that way (empty, NUL, a path that leaves
// the offsets dir or is not the one a listing would give); the caller then
// scans. Files counts the files found; LegacyDir is set as ScanOffsets sets
// it; directory findings (tmp leftovers, unknown files) are not looked for.
func ScanGroups(l Layout, groups []string, opts ScanOptions, fn func(*OffsetScanItem) error) (res ScanResult, ok bool, err error) {
	groups = slices.Compact(slices.Sorted(slices.Values(groups)))
	for _, g := range groups {
		if g == "" || strings.ContainsRune(g, 0) || strings.Contains(g, `\`) || filepath.IsAbs(g) ||
			filepath.Clean(g) != g || g == "." || g == ".." || strings.HasPrefix(g, "../") || strings.HasSuffix(g, ".tmp") {
			return res, false, nil
		}
	}
	l = l.WithGeneration()
	gi := l.Gen
	opts.gen = gi
	res.Generation = gi
	var jobs []scanJob
	for _, d := range l.OffsetsDirs() {
		if st, err := os.Stat(d.Path); err != nil || !st.IsDir() {
			continue
		}
		for _, g := range groups {
			p := filepath.Join(d.Path, g+".json")
			st, err := os.Lstat(p)
			switch {
			case err != nil:
			case st.Mode().IsRegular():
				jobs = append(jobs, scanJob{group: g, path: p, layout: d.Role, inSubdir: strings.Contains(g, "/")})
				d.Groups = append(d.Groups, g)
			case st.Mode()&os.ModeSymlink != 0:
				// The group's own file is a link: never read, but said, so
				// "no offset file" is not the answer; a link to a regular
				// file is the group kaas serves (its item says so).
				res.Findings = append(res.Findings, symlinkFinding(p))
				if linksToRegular(p) {
					jobs = append(jobs, scanJob{group: g, path: p, layout: d.Role, inSubdir: strings.Contains(g, "/")})
					d.Groups = append(d.Groups, g)
				}
			case !st.IsDir():
				res.Findings = append(res.Findings, notRegularFinding(p, st.Mode()))
			}
		}
		if d.Role == OffsetsLegacy {
			res.LegacyDir = d.Path
		}
		res.Dirs = append(res.Dirs, d)
	}
	res.Files = len(jobs)
	if opts.OnListed != nil {
		opts.OnListed(len(jobs))
	}
	return res, true, runOrdered(jobs, opts, fn)
}

// listOffsetDir appends the group files of one offsets dir (recursively,
// for group ids containing "/") and records odd entries as findings.
func listOffsetDir(dir, layout string, now time.Time, fs *[]Finding, jobs []scanJob) []scanJob {
	start := len(jobs)
	stack := []listFrame{{dir, "", 0}}
	for len(stack) > 0 {
		fr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := readDirUnsorted(fr.dir)
		if err != nil {
			*fs = append(*fs, Finding{Severity: SevError, Code: CodeUnreadableDir, Path: fr.dir, Message: "cannot list directory: " + err.Error(), Fix: "check the volume mount and permissions"})
			continue
		}
		d := dirListing{listFrame: fr, layout: layout, now: now, fs: fs, jobs: jobs}
		found := len(*fs)
		for _, e := range ents {
			d.entry(e)
		}
		d.finish(found)
		jobs = d.jobs
		for i := len(d.subdirs) - 1; i >= 0; i-- {
			stack = append(stack, d.subdirs[i])
		}
	}
	// Files of the top level and sub-directories: one order by group id (a
	// group id names one file of a layout).
	slices.SortFunc(jobs[start:], func(a, b scanJob) int { return strings.Compare(a.group, b.group) })
	return jobs
}

// listFrame is one directory of an offsets dir to list: the offsets dir
// itself (depth 0) or a sub-directory, whose path below the offsets dir
// prefixes its files' group ids.
type listFrame struct {
	dir, prefix string
	depth       int
}

// dirListing is the listing of one directory of an offsets dir: the group
// files it found (appended to jobs), its sub-directories to list next,
// and the entries it reports together once the directory is done.
type dirListing struct {
	listFrame
	layout string
	now    time.Time
	fs     *[]Finding
	jobs   []scanJob
	// sd is the offsets dir, open (opened at its first file).
	sd                     *safefs.Dir
	subdirs                []listFrame
	backups                int
	backupBytes            int64
	unknown, futureBackups []string
}

// open is the offsets dir opened at its first file, for its files to be
// opened by name in it: the kernel resolves one name, not the path. A
// sub-directory's files (group ids with "/", which kaas never writes)
// keep being read by path, so a scan holds one directory open per offsets
// dir however many sub-directories there are.
func (d *dirListing) open() *safefs.Dir {
	if d.sd == nil && d.depth == 0 {
		if sd, err := safefs.OpenDir(d.dir); err == nil {
			d.sd = sd
		}
	}
	return d.sd
}

// entry sorts one directory entry: a sub-directory to list, a group file
// to read (a link to one is listed, never read through), or a finding (a
// temporary file, a link, a group file that is not a regular file, a
// kaasctl backup, a foreign file).
func (d *dirListing) entry(e os.DirEntry) {
	name := e.Name()
	p := filepath.Join(d.dir, name)
	switch {
	case e.IsDir():
		if d.depth >= 16 {
			*d.fs = append(*d.fs, Finding{Severity: SevWarning, Code: CodeUnknownFile, Path: p, Message: "directory nested too deep; not scanned"})
			return
		}
		d.subdirs = append(d.subdirs, listFrame{p, d.prefix + name + "/", d.depth + 1})
	case strings.HasSuffix(name, ".tmp"):
		*d.fs = append(*d.fs, tmpFinding(p, d.now))
	case e.Type()&os.ModeSymlink != 0:
		*d.fs = append(*d.fs, symlinkFinding(p))
		if strings.HasSuffix(name, ".json") && linksToRegular(p) {
			d.groupFile(name, p)
		}
	case strings.HasSuffix(name, ".json") && e.Type().IsRegular():
		d.groupFile(name, p)
	case strings.HasSuffix(name, ".json") && !e.Type().IsRegular():
		var mode os.FileMode = os.ModeIrregular
		if info, err := e.Info(); err == nil {
			mode = info.Mode()
		}
		*d.fs = append(*d.fs, notRegularFinding(p, mode))
	case strings.Contains(name, BackupMarker):
		d.backups++
		if info, err := e.Info(); err == nil {
			d.backupBytes += info.Size()
		}
		if t, ok := BackupTime(name); ok && t.After(d.now.Add(FutureSlack)) {
			d.futureBackups = append(d.futureBackups, p)
		}
	default:
		d.unknown = append(d.unknown, p)
	}
}

// groupFile adds the group file name (at path p) to the files to read.
func (d *dirListing) groupFile(name, p string) {
	d.jobs = append(d.jobs, scanJob{group: d.prefix + strings.TrimSuffix(name, ".json"), path: p, layout: d.layout, inSubdir: d.prefix != "", dir: d.open(), name: name})
}

// finish adds the findings reported once per directory (foreign files,
// backups, backups from the future) and puts the directory's findings
// from found on, and its sub-directories, in name order: its entries came
// unsorted.
func (d *dirListing) finish(found int) {
	fs := d.fs
	if len(d.unknown) > 0 {
		*fs = append(*fs, aggregateNames(d.dir, d.unknown, Finding{Severity: SevInfo, Code: CodeUnknownFile, Message: "not an offset file (no .json suffix); kaas ignores it"},
			"files that are not offset files (no .json suffix); kaas ignores them"))
	}
	slices.SortFunc((*fs)[found:], func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(d.subdirs, func(a, b listFrame) int { return strings.Compare(a.dir, b.dir) })
	if d.backups > 0 {
		*fs = append(*fs, backupFinding(d.dir, d.backups, d.backupBytes))
	}
	if len(d.futureBackups) > 0 {
		*fs = append(*fs, aggregateNames(d.dir, d.futureBackups, futureBackupFinding,
			"kaasctl backups named for a time in the future: no point in any group's history (a clock that was ahead, or files kaasctl did not make); a write's pruning removes them first"))
	}
}

// readDirUnsorted is os.ReadDir without its sort by name (the scan orders
// the files by group id, and a directory's few other entries by name).
func readDirUnsorted(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// tmpFinding reports a *.tmp file with its age.
func tmpFinding(p string, now time.Time) Finding {
	st, err := os.Lstat(p)
	if err != nil {
		return Finding{Severity: SevWarning, Code: CodeStaleTmp, Path: p, Message: "temporary file from an interrupted write (age unknown: " + err.Error() + ")", Fix: "run 'kaasctl volume repair' to remove stale temporary files"}
	}
	if f, ok := FutureModTime(p, st.ModTime(), now, "temporary file", "so 'volume repair' never takes it for stale and leaves it"); ok {
		return f
	}
	age := now.Sub(st.ModTime())
	if age < StaleTmpAge {
		return Finding{Severity: SevInfo, Code: CodeInFlightTmp, Path: p, Message: fmt.Sprintf("temporary file %s old: probably a write in flight", roundAge(age))}
	}
	return Finding{Severity: SevWarning, Code: CodeStaleTmp, Path: p,
		Message: fmt.Sprintf("stale temporary file, %s old (modified %s): an interrupted atomic write; kaas never cleans these up", roundAge(age), st.ModTime().UTC().Format(time.RFC3339)),
		Fix:     "run 'kaasctl volume repair' to remove stale temporary files"}
}

func roundAge(d time.Duration) string {
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// scanSlot is a run of consecutive jobs one worker reads and parses
// (items[i] is jobs[i]'s result), handed to fn in order once done closes:
// a 100,000-file scan hands over a few thousand runs, not 100,000 items.
type scanSlot struct {
	jobs  []scanJob
	items []OffsetScanItem
	done  chan struct{}
}

// scanBatch is the most jobs one slot holds.
const scanBatch = 16

// runOrdered reads and parses jobs with a worker pool and hands results to
// fn in job order, holding at most Window results at once.
func runOrdered(jobs []scanJob, opts ScanOptions, fn func(*OffsetScanItem) error) error {
	workers := opts.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	window := opts.Window
	if window <= 0 {
		window = 8 * scanBatch * workers
	}
	if len(jobs) == 0 {
		return nil
	}
	// Runs of batch jobs, at least two runs per worker in the window.
	batch := min(scanBatch, max(1, window/(2*workers)))
	slots := max(1, window/batch)
	order := make(chan *scanSlot, slots)
	work := make(chan *scanSlot, slots)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scanSlots(work, opts)
		}()
	}
	go feedSlots(jobs, batch, order, work, stop)
	err := handOver(order, stop, opts, fn)
	wg.Wait()
	return err
}

// scanSlots is one worker: it reads and parses each slot's jobs, reusing
// one buffer, and closes the slot's done once its items are ready.
func scanSlots(work <-chan *scanSlot, opts ScanOptions) {
	var buf []byte
	for s := range work {
		for i := range s.jobs {
			buf = scanOne(s.jobs[i], &s.items[i], buf, opts)
		}
		close(s.done)
	}
}

// feedSlots cuts jobs into slots of batch jobs and queues each in order
// (where handOver waits for it) before handing it to the workers; the
// order queue's capacity is the window. It stops early when stop closes.
func feedSlots(jobs []scanJob, batch int, order, work chan<- *scanSlot, stop <-chan struct{}) {
	defer close(work)
	defer close(order)
	for len(jobs) > 0 {
		n := min(batch, len(jobs))
		s := &scanSlot{jobs: jobs[:n:n], items: make([]OffsetScanItem, n), done: make(chan struct{})}
		jobs = jobs[n:]
		select {
		case order <- s: // blocks when the window is full
		case <-stop:
			return
		}
		work <- s
	}
}

// handOver gives fn each slot's items in order as the slot is done (then
// opts.OnItem), and drops them once given, so the window bounds what is
// held. After fn's first error it closes stop and only drains the slots
// already queued.
func handOver(order <-chan *scanSlot, stop chan<- struct{}, opts ScanOptions, fn func(*OffsetScanItem) error) error {
	var err error
	for s := range order {
		<-s.done
		for i := range s.items {
			if err != nil {
				break
			}
			if e := fn(&s.items[i]); e != nil {
				err = e
				close(stop)
			} else if opts.OnItem != nil {
				opts.OnItem(&s.items[i])
			}
		}
		s.items = nil
	}
	return err
}

func scanOne(j scanJob, it *OffsetScanItem, buf []byte, opts ScanOptions) []byte {
	*it = OffsetScanItem{Group: j.group, Path: j.path, Layout: j.layout, InSubdir: j.inSubdir, NameProblems: NameProblems(j.group)}
	if opts.NamesOnly || (opts.ReadGroup != nil && !opts.ReadGroup(j.group)) {
		return buf
	}
	var data []byte
	var info safefs.Info
	var err error
	if j.dir != nil {
		data, buf, info, err = j.dir.ReadIntoInfo(j.name, buf)
	} else {
		data, buf, info, err = safefs.ReadIntoInfo(j.path, buf)
	}
	it.ModTime = info.ModTime
	if err != nil {
		it.Err = &FileError{Path: j.path, Problem: readProblem(err)}
		if errors.Is(err, safefs.ErrSymlink) {
			it.Linked = true
			it.Err.Problem += "; kaas follows it and serves the group from the file it leads to, so the group is live; its offsets are unknown to kaasctl, not lost"
		}
		if errors.Is(err, fs.ErrPermission) {
			it.Denied = true
			it.Err.Problem = "permission denied: kaasctl may not read this file (" + err.Error() + "); its offsets are unknown to kaasctl, not lost"
		}
		return buf
	}
	if opts.SummaryOnly {
		if sum, ok := summarizeFast(data); ok {
			it.Summary = sum
			return buf
		}
	}
	f, fs, perr := ParseOffsetFile(j.path, data)
	fs = opts.gen.AdjustOffsetFindings(f, fs)
	it.File, it.Findings = f, fs
	if perr != nil {
		fe := &FileError{}
		if errors.As(perr, &fe) {
			it.Err = fe
		} else {
			it.Err = &FileError{Path: j.path, Problem: perr.Error()}
		}
	}
	return buf
}

// readInto reads a whole file reusing buf: regular files only (a FIFO,
// device, socket or link is refused without blocking), at most
// safefs.MaxFileBytes. On unix it uses plain open/fstat/read/close system
// calls (os.Open also registers every file with the runtime poller, which
// costs two more system calls per file and dominates a 100,000-file scan).
func readInto(path string, buf []byte) ([]byte, []byte, error) {
	return safefs.ReadInto(path, buf)
}

// readFileLimited is os.ReadFile with kaasctl's rules (see readInto).
func readFileLimited(path string) ([]byte, error) {
	data, _, err := readInto(path, nil)
	return data, err
}

// readProblem words a read error for a FileError (which adds the path).
func readProblem(err error) string { return safefs.Problem(err) }
