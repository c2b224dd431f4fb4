package volume

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ManifestFile is the name of a partition manifest.
const ManifestFile = "manifest.json"

// Finding codes for partition manifests and volume hygiene.
const (
	CodeManifestCorrupt  = "manifest.corruptFile"
	CodeManifestBadRange = "manifest.badRange"
	CodeManifestMissing  = "manifest.missing"
	CodeDeletingDir      = "volume.deletingDir"
)

// Manifest is DATA/<topic>/<partition>/manifest.json.
type Manifest struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	Path           string `json:"path"`
	Epoch          int64  `json:"epoch"`
	HighWatermark  int64  `json:"highWatermark"`
	LogStartOffset int64  `json:"logStartOffset"`
}

// ParseManifest parses manifest bytes.
func ParseManifest(path, topic string, partition int32, data []byte) (*Manifest, []Finding, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FileError{Path: path, Problem: "manifest is empty (an interrupted write?)"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err)}
	}
	if raw == nil {
		return nil, nil, &FileError{Path: path, Problem: "the file holds JSON null, not a manifest"}
	}
	m := &Manifest{Topic: topic, Partition: partition, Path: path}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"epoch", &m.Epoch}, {"highWatermark", &m.HighWatermark}, {"logStartOffset", &m.LogStartOffset}} {
		v, ok := raw[f.name]
		if !ok {
			return nil, nil, &FileError{Path: path, Problem: fmt.Sprintf("%q is missing", f.name)}
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			return nil, nil, &FileError{Path: path, Problem: fmt.Sprintf("%q is %s, not a 64-bit integer", f.name, abbreviate(v))}
		}
		*f.dst = n
	}
	var fs []Finding
	if m.LogStartOffset < 0 || m.HighWatermark < 0 {
		fs = append(fs, Finding{Severity: SevError, Code: CodeManifestBadRange, Path: path, Message: fmt.Sprintf("negative offsets (logStartOffset %d, highWatermark %d)", m.LogStartOffset, m.HighWatermark), Fix: "check the partition leader's logs; the manifest is rewritten by the leader"})
	} else if m.LogStartOffset > m.HighWatermark {
		fs = append(fs, Finding{Severity: SevError, Code: CodeManifestBadRange, Path: path, Message: fmt.Sprintf("logStartOffset %d is above highWatermark %d", m.LogStartOffset, m.HighWatermark), Fix: "check the partition leader's logs; the manifest is rewritten by the leader"})
	}
	return m, fs, nil
}

// ManifestPath is DATA/<topic>/<partition>/manifest.json, or "" when the
// data dir is unknown or the topic name would leave the data dir.
func (l Layout) ManifestPath(topic string, partition int32) string {
	d := l.PartitionDir(topic, partition)
	if d == "" {
		return ""
	}
	return filepath.Join(d, ManifestFile)
}

func safeComponent(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00") && !ReservedTopicName(s)
}

// ManifestReader reads partition manifests on demand and remembers them.
// Not safe for concurrent use.
type ManifestReader struct {
	L     Layout
	cache map[string]manifestResult
}

type manifestResult struct {
	m   *Manifest
	fs  []Finding
	err error
}

// Get returns the manifest of one partition. A missing manifest is a
// *FileError whose Problem says why the lag is unknown.
func (r *ManifestReader) Get(topic string, partition int32) (*Manifest, []Finding, error) {
	key := topic + "\x00" + strconv.Itoa(int(partition))
	if res, ok := r.cache[key]; ok {
		return res.m, res.fs, res.err
	}
	if r.cache == nil {
		r.cache = map[string]manifestResult{}
	}
	m, fs, err := r.read(topic, partition)
	r.cache[key] = manifestResult{m, fs, err}
	return m, fs, err
}

func (r *ManifestReader) read(topic string, partition int32) (*Manifest, []Finding, error) {
	p := r.L.ManifestPath(topic, partition)
	if p == "" {
		if r.L.DataDir == "" {
			return nil, nil, &FileError{Path: "", Problem: "data dir unknown (pass --data-dir): no partition manifests"}
		}
		return nil, nil, &FileError{Path: "", Problem: fmt.Sprintf("topic name %q cannot be a directory of the data dir", DisplayName(topic))}
	}
	data, err := readFileLimited(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &FileError{Path: p, Problem: "no manifest (the partition is not in this data dir: a pool log dir, a deleted topic, or never written; " + r.L.PoolNote() + ")"}
		}
		return nil, nil, &FileError{Path: p, Problem: readProblem(err)}
	}
	return ParseManifest(p, topic, partition, data)
}

// ScanManifests reads every DATA/<topic>/<partition>/manifest.json, skipping
// kaas's own directories (__cluster, __consumer_offsets) and dot dirs.
func ScanManifests(l Layout) ([]*Manifest, []Finding, []*FileError) {
	if l.DataDir == "" {
		return nil, nil, nil
	}
	if _, err := os.ReadDir(l.DataDir); err != nil {
		return nil, nil, []*FileError{{Path: l.DataDir, Problem: "cannot list: " + err.Error()}}
	}
	var out []*Manifest
	var finds []Finding
	var errs []*FileError
	// Every partition dir of the data dir and the pool dirs (PartitionDirs
	// leaves kaas's own dirs and dot dirs out).
	for _, tp := range PartitionDirs(l) {
		mp := filepath.Join(l.PartitionDir(tp.Topic, tp.Partition), ManifestFile)
		data, err := readFileLimited(mp)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				finds = append(finds, Finding{Severity: SevInfo, Code: CodeManifestMissing, Path: mp, Message: "partition dir without a manifest (kaas writes one on takeover and close); offline log ends come from the segment files"})
				continue
			}
			errs = append(errs, &FileError{Path: mp, Problem: readProblem(err)})
			continue
		}
		m, mfs, perr := ParseManifest(mp, tp.Topic, tp.Partition, data)
		finds = append(finds, mfs...)
		if perr != nil {
			errs = append(errs, asFileError(mp, perr))
			continue
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Manifest) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out, finds, errs
}

// TmpFindings reports every *.tmp file in the cluster dir (and its
// transaction sub-directories) and beside partition manifests, with its
// age. The offsets dirs are covered by ScanOffsets and skipped here.
func TmpFindings(l Layout, now time.Time) []Finding {
	var fs []Finding
	dirs := []string{l.ClusterDir, l.TxnStatePath(), l.FencesPath(), l.ProducerIDsPath()}
	if ents, err := os.ReadDir(l.MarkerQueuePath()); err == nil {
		dirs = append(dirs, l.MarkerQueuePath())
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(l.MarkerQueuePath(), e.Name()))
			}
		}
	}
	if l.DataDir != "" && l.DataDir != l.ClusterDir {
		if topics, err := os.ReadDir(l.DataDir); err == nil {
			for _, t := range topics {
				if !t.IsDir() || strings.HasPrefix(t.Name(), ".") || strings.HasPrefix(t.Name(), "__") {
					continue
				}
				tdir := filepath.Join(l.DataDir, t.Name())
				dirs = append(dirs, tdir)
				if parts, err := os.ReadDir(tdir); err == nil {
					for _, p := range parts {
						if p.IsDir() {
							dirs = append(dirs, filepath.Join(tdir, p.Name()))
						}
					}
				}
			}
		}
	}
	for _, d := range dirs {
		for _, name := range tmpNames(d) {
			fs = append(fs, tmpFinding(filepath.Join(d, name), now))
		}
	}
	return fs
}

func tmpNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

// DeletingDirFindings reports DATA/.deleting-* dirs (topic deletions the
// operator has staged and not yet reclaimed).
func DeletingDirFindings(l Layout) []Finding {
	if l.DataDir == "" {
		return nil
	}
	ents, err := os.ReadDir(l.DataDir)
	if err != nil {
		return nil
	}
	var fs []Finding
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".deleting-") {
			fs = append(fs, Finding{Severity: SevInfo, Code: CodeDeletingDir, Path: filepath.Join(l.DataDir, e.Name()),
				Message: "a deleted topic staged for reclaim; the kaas operator removes it on its next sweep (every 5 minutes)"})
		}
	}
	return fs
}
