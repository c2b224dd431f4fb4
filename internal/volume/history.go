package volume

import (
	"github.com/kaasctl/kaasctl/internal/safefs"

	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Snapshot is one assignment.json version read from disk: a file in a
// history directory, a `kaasctl watch` journal, or the live file.
type Snapshot struct {
	Path       string      `json:"path"`
	Assignment *Assignment `json:"-"`
	// Digest is the SHA-256 of the file bytes, to tell a true duplicate from
	// two different files that claim the same epoch and version.
	Digest [32]byte `json:"-"`
}

// Key orders snapshots: controller epoch first, then assignment version.
func (s Snapshot) Key() (int64, int64) {
	return s.Assignment.ControllerEpoch, s.Assignment.AssignmentVersion
}

// HistoryResult is what LoadAssignmentHistory read.
type HistoryResult struct {
	// Snapshots in (controllerEpoch, assignmentVersion) order, duplicates
	// dropped.
	Snapshots []Snapshot
	// Duplicates are files skipped because an identical version was read.
	Duplicates []string
	// Conflicts are files that claim an epoch and version already read with
	// different content (a manual edit, or two clusters' files mixed); the
	// first one read wins and each conflict is reported.
	Conflicts []string
	// Problems are files that could not be used; the rest is still loaded.
	Problems []*FileError
	// Skipped are files in a listed directory that are not JSON objects.
	Skipped []string
}

func historyLooksJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	return len(t) > 0 && t[0] == '{'
}

// maxAssignmentBytes bounds one assignment file; real ones are well under
// a few MB even with 100,000 entries.
const maxAssignmentBytes = 512 << 20

// LoadAssignmentHistory reads assignment versions from paths: each path is
// a file, or a directory whose regular files (any names, not recursive;
// hidden files and *.tmp ignored; files that are not JSON objects skipped)
// are all versions. A path that does not exist
// is a problem, not a fatal error.
func LoadAssignmentHistory(paths []string) HistoryResult {
	var res HistoryResult
	files, inDir := historyFiles(paths, &res)
	seen := map[historyKey]int{}
	for _, f := range files {
		res.load(f, inDir[f], seen)
	}
	slices.SortStableFunc(res.Snapshots, func(x, y Snapshot) int {
		xe, xv := x.Key()
		ye, yv := y.Key()
		if xe != ye {
			return cmpHistoryKey(xe, ye)
		}
		return cmpHistoryKey(xv, yv)
	})
	return res
}

// historyKey is a version's controller epoch and assignment version.
type historyKey struct{ e, v int64 }

// historyFiles lists the files paths name, in order: a file as given, a
// directory's files as listed; inDir marks the latter, which may be
// skipped as not JSON. A path that cannot be read is a problem in res.
func historyFiles(paths []string, res *HistoryResult) (files []string, inDir map[string]bool) {
	inDir = map[string]bool{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				res.Problems = append(res.Problems, &FileError{Path: p, Problem: "does not exist"})
			} else {
				res.Problems = append(res.Problems, &FileError{Path: p, Problem: err.Error()})
			}
			continue
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			res.Problems = append(res.Problems, &FileError{Path: p, Problem: err.Error()})
			continue
		}
		for _, e := range ents {
			name := e.Name()
			// Any name: kaas writes assignment.json, people save copies as
			// they like. Hidden files and in-flight *.tmp writes are skipped.
			if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp") {
				continue
			}
			if e.Type()&fs.ModeType != 0 && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			files = append(files, filepath.Join(p, name))
			inDir[filepath.Join(p, name)] = true
		}
	}
	return files, inDir
}

// load reads one version f into the result: a problem when it cannot be
// read or parsed, skipped when a listed file is not JSON, a duplicate or a
// conflict when seen already has its epoch and version (the first one
// read wins).
func (res *HistoryResult) load(f string, listed bool, seen map[historyKey]int) {
	data, err := readBoundedHistory(f, maxAssignmentBytes)
	if err != nil {
		res.Problems = append(res.Problems, &FileError{Path: f, Problem: readProblem(err)})
		return
	}
	if listed && !historyLooksJSON(data) {
		// A README or a log beside the versions: not an assignment.
		res.Skipped = append(res.Skipped, f)
		return
	}
	a, _, err := ParseAssignment(f, data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			res.Problems = append(res.Problems, fe)
		} else {
			res.Problems = append(res.Problems, &FileError{Path: f, Problem: err.Error()})
		}
		return
	}
	s := Snapshot{Path: f, Assignment: a, Digest: sha256.Sum256(data)}
	k := historyKey{a.ControllerEpoch, a.AssignmentVersion}
	if i, ok := seen[k]; ok {
		if res.Snapshots[i].Digest == s.Digest {
			res.Duplicates = append(res.Duplicates, f)
		} else {
			res.Conflicts = append(res.Conflicts, f)
		}
		return
	}
	seen[k] = len(res.Snapshots)
	res.Snapshots = append(res.Snapshots, s)
}

func cmpHistoryKey(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readBoundedHistory reads a file the user named (links followed): a
// regular file only, never blocking, at most limit bytes.
func readBoundedHistory(path string, limit int64) ([]byte, error) {
	data, _, err := safefs.ReadFileFollow(path, limit)
	return data, err
}

// KnownOffsetGroups lists the group names that have an offset file, in
// the current and the legacy layout (sub-directories included, as
// ScanOffsets names them), deduplicated and sorted. Names only: no file is
// read.
func (l Layout) KnownOffsetGroups() ([]string, error) {
	var names []string
	_, err := ScanOffsets(l, ScanOptions{NamesOnly: true}, func(it *OffsetScanItem) error {
		names = append(names, it.Group)
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names), err
}
