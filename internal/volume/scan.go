package volume

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Where an offset file was found.
const (
	OffsetsCurrent = "current" // CD/__consumer_offsets
	OffsetsLegacy  = "legacy"  // DATA/__consumer_offsets
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
)

// StaleTmpAge is how old a *.tmp file must be before kaasctl calls it stale:
// kaas's own writes finish in milliseconds.
const StaleTmpAge = 5 * time.Minute

// MaxStateFileBytes caps any state file kaasctl reads into memory.
const MaxStateFileBytes = 256 << 20

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
}

// ScanOptions tunes ScanOffsets.
type ScanOptions struct {
	// Workers reading and parsing in parallel; 0 means 2×GOMAXPROCS (the
	// work is mostly waiting on the file system).
	Workers int
	// Window bounds how many results may wait for their turn; 0 means 4×Workers.
	Window int
	// Now is the clock for tmp-file ages; zero means time.Now().
	Now time.Time
	// NamesOnly skips reading the files (Group, Path, Layout, names only).
	NamesOnly bool
	// OnListed, when set, is called with the number of files before the
	// first item (to size the caller's buffers).
	OnListed func(files int)
	// SummaryOnly validates clean files and counts their partitions without
	// keeping entries (Summary set, File nil); files with anything odd are
	// still fully parsed so their findings are complete.
	SummaryOnly bool
}

// ScanResult is what a scan saw besides the files themselves.
type ScanResult struct {
	Files    int
	Findings []Finding // directory-level: legacy dir, tmp leftovers, unknown files
	// LegacyDir is DATA/__consumer_offsets when it exists.
	LegacyDir string
}

type scanJob struct {
	group, path, layout string
	inSubdir            bool
}

// ScanOffsets lists the offset files of both layouts (current first, then
// legacy; each sorted by file name) and calls fn for each, in that order,
// while a bounded pool of workers reads and parses ahead. Memory stays
// bounded by the window, not by the total size of the files. fn runs on the
// caller's goroutine; returning an error stops the scan.
func ScanOffsets(l Layout, opts ScanOptions, fn func(*OffsetScanItem) error) (ScanResult, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var res ScanResult
	var jobs []scanJob
	cur := l.OffsetsPath()
	if st, err := os.Stat(cur); err == nil && st.IsDir() {
		jobs = listOffsetDir(cur, OffsetsCurrent, now, &res.Findings, jobs)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		res.Findings = append(res.Findings, Finding{Severity: SevError, Code: CodeUnreadableDir, Path: cur, Message: "cannot read the offsets dir: " + err.Error(), Fix: "check the volume mount and permissions"})
	}
	if leg := l.LegacyOffsetsPath(); leg != "" && leg != cur {
		if st, err := os.Stat(leg); err == nil && st.IsDir() {
			res.LegacyDir = leg
			n := len(jobs)
			jobs = listOffsetDir(leg, OffsetsLegacy, now, &res.Findings, jobs)
			res.Findings = append(res.Findings, Finding{Severity: SevWarning, Code: CodeLegacyOffsetsDir, Path: leg,
				Message: fmt.Sprintf("legacy offsets dir (kaas ≤ v0.2.15 and the Go flavour) with %d group files: kaas v0.2.18 never reads it and its operator deletes it within 5 minutes", len(jobs)-n),
				Fix:     "run 'kaasctl volume repair' to migrate it into the cluster dir (the operator's sweep deletes it otherwise)"})
		}
	}
	if len(jobs) == 0 && res.LegacyDir == "" {
		if _, err := os.Stat(cur); errors.Is(err, fs.ErrNotExist) {
			res.Findings = append(res.Findings, Finding{Severity: SevInfo, Code: CodeNoOffsetsDir, Path: cur, Message: "no offsets dir: no group has committed offsets yet (or this is not the cluster dir)"})
		}
	}
	res.Files = len(jobs)
	if opts.OnListed != nil {
		opts.OnListed(len(jobs))
	}
	return res, runOrdered(jobs, opts, fn)
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
	var jobs []scanJob
	look := func(dir, layout string) {
		for _, g := range groups {
			p := filepath.Join(dir, g+".json")
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
				jobs = append(jobs, scanJob{group: g, path: p, layout: layout, inSubdir: strings.Contains(g, "/")})
			}
		}
	}
	cur := l.OffsetsPath()
	look(cur, OffsetsCurrent)
	if leg := l.LegacyOffsetsPath(); leg != "" && leg != cur {
		if st, err := os.Stat(leg); err == nil && st.IsDir() {
			res.LegacyDir = leg
			look(leg, OffsetsLegacy)
		}
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
	type frame struct {
		dir, prefix string
		depth       int
	}
	stack := []frame{{dir, "", 0}}
	for len(stack) > 0 {
		fr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := os.ReadDir(fr.dir)
		if err != nil {
			*fs = append(*fs, Finding{Severity: SevError, Code: CodeUnreadableDir, Path: fr.dir, Message: "cannot list directory: " + err.Error(), Fix: "check the volume mount and permissions"})
			continue
		}
		var subdirs []frame
		for _, e := range ents {
			name := e.Name()
			p := filepath.Join(fr.dir, name)
			switch {
			case e.IsDir():
				if fr.depth >= 16 {
					*fs = append(*fs, Finding{Severity: SevWarning, Code: CodeUnknownFile, Path: p, Message: "directory nested too deep; not scanned"})
					continue
				}
				subdirs = append(subdirs, frame{p, fr.prefix + name + "/", fr.depth + 1})
			case strings.HasSuffix(name, ".tmp"):
				*fs = append(*fs, tmpFinding(p, now))
			case e.Type()&os.ModeSymlink != 0:
				*fs = append(*fs, Finding{Severity: SevWarning, Code: CodeSymlink, Path: p, Message: "symbolic link in the offsets dir: kaas follows it on read and replaces it with a plain file on the next commit; kaasctl does not follow it", Fix: "replace the link with the file it points to, or remove it"})
			case strings.HasSuffix(name, ".json") && e.Type().IsRegular():
				jobs = append(jobs, scanJob{group: fr.prefix + strings.TrimSuffix(name, ".json"), path: p, layout: layout, inSubdir: fr.prefix != ""})
			case strings.Contains(name, BackupMarker):
				*fs = append(*fs, Finding{Severity: SevInfo, Code: CodeKaasctlBackup, Path: p,
					Message: "kaasctl's backup of " + name[:strings.Index(name, BackupMarker)] + " from a reset, delete or repair; kaas ignores it",
					Fix:     "delete it once the change is verified"})
			default:
				*fs = append(*fs, Finding{Severity: SevInfo, Code: CodeUnknownFile, Path: p, Message: "not an offset file (no .json suffix); kaas ignores it"})
			}
		}
		for i := len(subdirs) - 1; i >= 0; i-- {
			stack = append(stack, subdirs[i])
		}
	}
	// Files of the top level and sub-directories: one stable order by group id.
	slices.SortStableFunc(jobs, func(a, b scanJob) int {
		if a.layout != b.layout {
			if a.layout == OffsetsCurrent {
				return -1
			}
			return 1
		}
		return strings.Compare(a.group, b.group)
	})
	return jobs
}

// tmpFinding reports a *.tmp file with its age.
func tmpFinding(p string, now time.Time) Finding {
	st, err := os.Lstat(p)
	if err != nil {
		return Finding{Severity: SevWarning, Code: CodeStaleTmp, Path: p, Message: "temporary file from an interrupted write (age unknown: " + err.Error() + ")", Fix: "run 'kaasctl volume repair' to remove stale temporary files"}
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
		return "0s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

type scanSlot struct {
	job  scanJob
	item OffsetScanItem
	done chan struct{}
}

// runOrdered reads and parses jobs with a worker pool and hands results to
// fn in job order, holding at most Window results at once.
func runOrdered(jobs []scanJob, opts ScanOptions, fn func(*OffsetScanItem) error) error {
	workers := opts.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	window := opts.Window
	if window <= 0 {
		window = 4 * workers
	}
	if len(jobs) == 0 {
		return nil
	}
	order := make(chan *scanSlot, window)
	work := make(chan *scanSlot, window)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for s := range work {
				buf = scanOne(s, buf, opts)
				close(s.done)
			}
		}()
	}
	go func() {
		defer close(work)
		defer close(order)
		for _, j := range jobs {
			s := &scanSlot{job: j, done: make(chan struct{})}
			select {
			case order <- s: // blocks when the window is full
			case <-stop:
				return
			}
			work <- s
		}
	}()
	var err error
	for s := range order {
		<-s.done
		if err == nil {
			if e := fn(&s.item); e != nil {
				err = e
				close(stop)
			}
		}
	}
	wg.Wait()
	return err
}

func scanOne(s *scanSlot, buf []byte, opts ScanOptions) []byte {
	j := s.job
	it := &s.item
	*it = OffsetScanItem{Group: j.group, Path: j.path, Layout: j.layout, InSubdir: j.inSubdir, NameProblems: NameProblems(j.group)}
	if opts.NamesOnly {
		return buf
	}
	data, buf, err := readInto(j.path, buf)
	if err != nil {
		it.Err = &FileError{Path: j.path, Problem: err.Error()}
		return buf
	}
	if opts.SummaryOnly {
		if sum, ok := summarizeFast(data); ok {
			it.Summary = sum
			return buf
		}
	}
	f, fs, perr := ParseOffsetFile(j.path, data)
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

// readInto reads a whole file reusing buf; files over MaxStateFileBytes are
// refused. On unix it uses plain open/read/close system calls (os.Open
// also registers every file with the runtime poller, which costs two more
// system calls per file and dominates a 100,000-file scan).
func readInto(path string, buf []byte) ([]byte, []byte, error) {
	return platformReadInto(path, buf)
}

func growBuf(buf []byte) ([]byte, error) {
	if cap(buf) >= MaxStateFileBytes {
		return buf, fmt.Errorf("file is larger than %d MiB; kaasctl does not read it", MaxStateFileBytes>>20)
	}
	return slices.Grow(buf, max(4096, cap(buf))), nil
}

// portableReadInto is readInto through package os.
func portableReadInto(path string, buf []byte) ([]byte, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, buf, err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if buf, err = growBuf(buf); err != nil {
				return nil, buf, err
			}
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, buf, nil
		}
		if err != nil {
			return nil, buf, err
		}
	}
}

// readFileLimited is os.ReadFile with kaasctl's size cap.
func readFileLimited(path string) ([]byte, error) {
	data, _, err := readInto(path, nil)
	return data, err
}
