// Package volume reads kaas's shared volume: where the cluster dir is, and
// every file format kaasctl understands (assignment.json today; offset files,
// transaction slots and partition manifests beside it). Readers are lenient
// but honest: a file that cannot be understood yields a *FileError naming the
// file and the problem, and anything odd but readable yields a Finding.
package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// Well-known names inside the cluster dir and the data dir.
const (
	AssignmentFile = "assignment.json"
	OffsetsDir     = "__consumer_offsets"
	ClusterSubdir  = "__cluster"
	TxnStateDir    = "txn_state"
	FencesDir      = "producer_fences"
	MarkerQueueDir = "marker_queue"
	ProducerIDsDir = "producer_ids"
)

// Layout is a resolved volume: the cluster dir always, the data dir when known.
type Layout struct {
	DataDir    string `json:"dataDir"`
	ClusterDir string `json:"clusterDir"`
	// Source says how ClusterDir was found, for messages.
	Source string `json:"source"`
	// Gen is the kaas generation assumed for the volume and why (detected
	// by Resolve, or pinned); WithGeneration detects it for a Layout built
	// by hand.
	Gen GenerationInfo `json:"-"`
	// LogDirs are a volume pool's other log dirs (KAAS_LOG_DIRS, --log-dirs):
	// partition dirs are looked up in the data dir, then in each of them.
	LogDirs []string `json:"logDirs,omitempty"`
}

// AssignmentPath is CD/assignment.json.
func (l Layout) AssignmentPath() string { return filepath.Join(l.ClusterDir, AssignmentFile) }

// WriteLogName is kaasctl's write log in the cluster dir: a JSON line per
// group kaasctl rewrote (a dot name kaas's brokers and operator leave alone).
const WriteLogName = ".kaasctl-writes.jsonl"

// WriteLogPath is CD/.kaasctl-writes.jsonl ("" without a cluster dir).
func (l Layout) WriteLogPath() string {
	if l.ClusterDir == "" {
		return ""
	}
	return filepath.Join(l.ClusterDir, WriteLogName)
}

// OffsetsPath is CD/__consumer_offsets whatever its role. Code outside
// this package asks by role or generation instead (LiveOffsetsDir,
// OffsetsDirs, LiveOffsetsDirOf); tests use it to build volumes.
func (l Layout) OffsetsPath() string { return l.Path(locClusterOffsets) }

// LegacyOffsetsPath is the offsets dir the volume's generation calls
// legacy (DATA/__consumer_offsets on Rust 0.2.18: brokers never read it
// and the operator deletes it), else "".
func (l Layout) LegacyOffsetsPath() string {
	for _, d := range l.OffsetsDirs() {
		if d.Role == OffsetsLegacy {
			return d.Path
		}
	}
	return ""
}

// TxnStatePath is CD/txn_state.
func (l Layout) TxnStatePath() string { return l.Path(l.spec().TxnState) }

// FencesPath is CD/producer_fences.
func (l Layout) FencesPath() string { return l.Path(l.spec().ProducerFences) }

// MarkerQueuePath is CD/marker_queue.
func (l Layout) MarkerQueuePath() string { return l.Path(l.spec().MarkerQueue) }

// ProducerIDsPath is CD/producer_ids.
func (l Layout) ProducerIDsPath() string { return l.Path(l.spec().ProducerIDs) }

// spec is the volume model row of the assumed generation, or the newest
// one when the generation is unknown (the rows agree on what callers of
// spec ask).
func (l Layout) spec() GenerationSpec {
	if s, ok := l.Gen.Gen.Spec(); ok {
		return s
	}
	return generationSpecs[len(generationSpecs)-1]
}

// WriteRoot is the directory a write to path is checked from, the one
// place that decides it for every writer: the outermost of the volume's
// dirs (the data dir, the cluster dir) that holds path. Every component
// below it is then opened without following links, so DATA/__cluster is
// checked too whenever the cluster dir lies in the data dir (a planted
// link there would send a write outside the volume); a cluster dir the
// user named outside the data dir is its own root. "" when path is in
// neither.
func (l Layout) WriteRoot(path string) string {
	root := ""
	for _, r := range []string{l.DataDir, l.ClusterDir} {
		if r == "" || !within(r, path) {
			continue
		}
		if root == "" || within(r, root) {
			root = r
		}
	}
	return root
}

// OpenWriteDir opens dir, a directory of the volume a write goes to, from
// its WriteRoot down without following links (unless follow, the user's
// --follow-symlinks); a dir outside the volume is refused.
func (l Layout) OpenWriteDir(dir string, follow bool) (*safefs.Dir, error) {
	root := l.WriteRoot(dir)
	if root == "" {
		return nil, fmt.Errorf("%s is not inside the volume (%s, %s): kaasctl writes only there", dir, l.DataDir, l.ClusterDir)
	}
	return safefs.OpenBelow(root, dir, follow, true)
}

// within reports whether path is root or beneath it (lexically, after
// filepath.Clean; one spelling of a directory is not another's).
func within(root, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// LinkedVolumeDirs lists the components between the data dir and the
// cluster dir (DATA/__cluster) that are symbolic links: kaasctl reads
// through them, its writes refuse them.
func (l Layout) LinkedVolumeDirs() []string {
	if l.DataDir == "" || l.ClusterDir == "" || !within(l.DataDir, l.ClusterDir) {
		return nil
	}
	rel, _ := filepath.Rel(filepath.Clean(l.DataDir), filepath.Clean(l.ClusterDir))
	var out []string
	p := filepath.Clean(l.DataDir)
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if c == "." || c == "" {
			continue
		}
		p = filepath.Join(p, c)
		if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			out = append(out, p)
		}
	}
	return out
}

// ResolveInput is what the user gave, by source.
type ResolveInput struct {
	ClusterDirFlag, DataDirFlag       string // --cluster-dir, --data-dir
	EnvClusterDir, EnvDataDir         string // KAAS_CLUSTER_DIR, KAAS_DATA_DIR
	ProfileClusterDir, ProfileDataDir string // the active profile in config.yaml
	// The kaas version pinned by --kaas-version, KAASCTL_KAAS_VERSION and
	// the profile's kaasVersion (first non-empty wins over detection).
	KaasVersionFlag, EnvKaasVersion, ProfileKaasVersion string
	// LogDirsFlag (--log-dirs, paths or KAAS_LOG_DIRS' JSON) beats
	// EnvLogDirs (KAAS_LOG_DIRS, the broker's own JSON).
	LogDirsFlag []string
	EnvLogDirs  string
}

// NamesVolume reports whether any source names a volume.
func (in ResolveInput) NamesVolume() bool {
	return in.ClusterDirFlag != "" || in.DataDirFlag != "" || in.EnvClusterDir != "" || in.EnvDataDir != "" ||
		in.ProfileClusterDir != "" || in.ProfileDataDir != ""
}

// ErrNoVolume means no flag, environment variable or profile named a volume.
var ErrNoVolume = errors.New("no volume given: pass --data-dir DIR or --cluster-dir DIR (or set KAAS_DATA_DIR / KAAS_CLUSTER_DIR)")

// Resolve finds the cluster dir. Flags beat the environment, which beats the
// profile; within one source the rule is kaas's own:
//
//  1. a cluster dir (--cluster-dir, KAAS_CLUSTER_DIR) names it directly;
//  2. otherwise it is the data dir plus "__cluster";
//  3. a data dir that holds assignment.json directly (the chart's split
//     control-plane mount, or a copied snapshot) is itself the cluster dir.
//
// A data dir from the same or a lower source is kept beside an explicit
// cluster dir: it holds legacy offsets and partition manifests.
func Resolve(in ResolveInput) (Layout, error) {
	type src struct{ cluster, data, cname, dname string }
	clusters, datas := in.ClusterDirs(), in.DataDirs()
	for i := range clusters {
		s := src{clusters[i].Value, datas[i].Value, clusters[i].From, datas[i].From}
		if s.cluster == "" && s.data == "" {
			continue
		}
		var l Layout
		if s.cluster != "" {
			data := s.data
			if data == "" {
				data = firstNonEmpty(in.EnvDataDir, in.ProfileDataDir)
			}
			l = Layout{ClusterDir: s.cluster, DataDir: data, Source: s.cname}
		} else {
			if err := checkDir(s.data, s.dname); err != nil {
				return Layout{}, err
			}
			l = Layout{DataDir: s.data, ClusterDir: filepath.Join(s.data, ClusterSubdir), Source: s.dname + " + " + ClusterSubdir}
			// Any assignment.json that is not a directory makes DIR the
			// cluster dir: a FIFO or device there is then reported by name
			// by the readers (never read), not as "holds neither".
			if !isDir(l.ClusterDir) && existsNotDir(filepath.Join(s.data, AssignmentFile)) {
				l = Layout{DataDir: s.data, ClusterDir: s.data, Source: s.dname + " (holds " + AssignmentFile + " directly)"}
			}
		}
		if err := checkDir(l.ClusterDir, l.Source); err != nil {
			if s.cluster == "" {
				return Layout{}, &FileError{Path: s.data, Problem: "holds neither " + ClusterSubdir + "/ nor " + AssignmentFile + ": is this a kaas data dir? (a split control-plane volume is given with --cluster-dir)"}
			}
			return Layout{}, err
		}
		if s.cluster != "" && !isFile(filepath.Join(s.cluster, AssignmentFile)) && isDir(filepath.Join(s.cluster, ClusterSubdir)) {
			// A data dir given as the cluster dir: every read would find
			// nothing and report an empty, healthy cluster.
			return Layout{}, &FileError{Path: s.cluster, Problem: fmt.Sprintf("is a kaas data dir, not a cluster dir (from %s): it holds %s/ and no %s; pass --data-dir %s, or --cluster-dir %s",
				s.cname, ClusterSubdir, AssignmentFile, s.cluster, filepath.Join(s.cluster, ClusterSubdir))}
		}
		if l.DataDir != "" && l.DataDir != l.ClusterDir {
			if err := checkDir(l.DataDir, "data dir"); err != nil {
				return Layout{}, err
			}
		}
		dirs, err := in.logDirs()
		if err != nil {
			return Layout{}, err
		}
		l.LogDirs = dirs
		gi, err := ResolveGeneration(l, in)
		if err != nil {
			return Layout{}, err
		}
		l.Gen = gi
		return l, nil
	}
	return Layout{}, ErrNoVolume
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func checkDir(dir, src string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &FileError{Path: dir, Problem: fmt.Sprintf("directory does not exist (from %s)", src)}
		}
		return &FileError{Path: dir, Problem: err.Error()}
	}
	if !st.IsDir() {
		return &FileError{Path: dir, Problem: fmt.Sprintf("not a directory (from %s)", src)}
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// existsNotDir reports whether p exists (itself, not what a link leads
// to) and is not a directory.
func existsNotDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && !st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
