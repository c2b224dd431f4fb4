package sandbox

import (
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetFile is kaas's v2 offsets envelope.
type offsetFile struct {
	Offsets  map[string]int64  `json:"offsets"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// offsetStore mirrors kaas's per-group offset cache: every successful commit
// merges into the group's set and the whole set is written to
// CD/__consumer_offsets/<group>.json (tmp + fsync + rename).
type offsetStore struct {
	dir    string
	mu     sync.Mutex
	groups map[string]*offsetFile
}

func newOffsetStore(dir string) *offsetStore {
	return &offsetStore{dir: dir, groups: map[string]*offsetFile{}}
}

// load reads the existing v2 files into the cache (a restarted sandbox on
// the same volume keeps them) and returns the group names it found.
func (o *offsetStore) load() []string {
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".json") {
			continue
		}
		data, err := safefs.ReadFile(filepath.Join(o.dir, n)) // regular files only: never blocks
		if err != nil || len(data) > 64<<20 {
			continue
		}
		var f offsetFile
		if json.Unmarshal(data, &f) != nil || f.Offsets == nil {
			continue
		}
		g := strings.TrimSuffix(n, ".json")
		o.groups[g] = &f
		names = append(names, g)
	}
	return names
}

// groupFileProblem says why a group id cannot be a file name here (kaas
// writes such names raw and breaks; the sandbox refuses and logs instead).
func groupFileProblem(g string) string {
	switch {
	case g == "":
		return "empty group id"
	case strings.ContainsAny(g, "/\\\x00"):
		return "group id contains '/', '\\' or NUL"
	case g == "." || g == "..":
		return "group id is . or .."
	case !utf8.ValidString(g):
		return "group id is not valid UTF-8"
	case len(g) > 246:
		return "group id longer than 246 bytes (" + strconv.Itoa(len(g)) + ")"
	}
	return ""
}

type committed struct {
	key    string
	offset int64
	meta   *string
}

// commit merges offsets into a group's set and rewrites its file.
func (o *offsetStore) commit(group string, cs []committed) error {
	if p := groupFileProblem(group); p != "" {
		return errors.New(p)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.groups[group]
	if f == nil {
		f = &offsetFile{Offsets: map[string]int64{}}
		o.groups[group] = f
	}
	for _, c := range cs {
		f.Offsets[c.key] = c.offset
		// kaas drops empty metadata before storing: a commit never clears it.
		if c.meta != nil && *c.meta != "" {
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			f.Metadata[c.key] = *c.meta
		}
	}
	return o.writeLocked(group, f)
}

func (o *offsetStore) deletePartitions(group string, keys []string) error {
	if p := groupFileProblem(group); p != "" {
		return errors.New(p)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.groups[group]
	if f == nil {
		return nil
	}
	for _, k := range keys {
		delete(f.Offsets, k)
		delete(f.Metadata, k)
	}
	return o.writeLocked(group, f)
}

func (o *offsetStore) writeLocked(group string, f *offsetFile) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(o.dir, group+".json"), data)
}

// remove drops a group's set and its file.
func (o *offsetStore) remove(group string) error {
	if p := groupFileProblem(group); p != "" {
		return errors.New(p)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.groups, group)
	err := os.Remove(filepath.Join(o.dir, group+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// groupNames lists the groups with a committed set.
func (o *offsetStore) groupNames() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.groups))
	for g := range o.groups {
		out = append(out, g)
	}
	return out
}

// snapshot returns a copy of a group's committed set.
func (o *offsetStore) snapshot(group string) map[string]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.groups[group]
	if f == nil {
		return nil
	}
	out := make(map[string]int64, len(f.Offsets))
	for k, v := range f.Offsets {
		out[k] = v
	}
	return out
}

// writeFileAtomic writes path.tmp, fsyncs it and renames it over path, as
// kaas does (fixed tmp name; callers serialise writes to one path).
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
	}
	return werr
}

func tpKey(topic string, part int32) string { return topic + "/" + strconv.Itoa(int(part)) }

// afterCommit records a relayed OffsetCommit's successful partitions on the
// volume before the client sees the response.
func (s *Sandbox) afterCommit(b *broker, f *frame, req *kmsg.OffsetCommitRequest, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.OffsetCommitResponse)
	ok := map[string]bool{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				ok[tpKey(t.Topic, p.Partition)] = true
			}
		}
	}
	var cs []committed
	for _, t := range req.Topics {
		if t.Topic == "" {
			b.log.log("WARN", targetSandbox, "sandbox: OffsetCommit by topic id is not mirrored to the offsets file", kv{"group", req.Group})
			continue
		}
		for _, p := range t.Partitions {
			k := tpKey(t.Topic, p.Partition)
			if ok[k] {
				cs = append(cs, committed{key: k, offset: p.Offset, meta: p.Metadata})
			}
		}
	}
	if len(cs) > 0 {
		if err := s.offsets.commit(req.Group, cs); err != nil {
			// kaas swallows this and reports success; so do we, but we say so.
			b.log.log("WARN", targetSandbox, "sandbox: offsets file not written", kv{"group", req.Group}, kv{"err", err.Error()})
		}
	}
	return withSize(raw)
}

func (s *Sandbox) afterOffsetDelete(b *broker, f *frame, req *kmsg.OffsetDeleteRequest, raw []byte) []byte {
	resp, err := f.decodeResponse(raw)
	if err != nil {
		return withSize(raw)
	}
	r := resp.(*kmsg.OffsetDeleteResponse)
	if r.ErrorCode != 0 {
		return withSize(raw)
	}
	var keys []string
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				keys = append(keys, tpKey(t.Topic, p.Partition))
			}
		}
	}
	if len(keys) > 0 {
		if err := s.offsets.deletePartitions(req.Group, keys); err != nil {
			b.log.log("WARN", targetSandbox, "sandbox: offsets file not rewritten", kv{"group", req.Group}, kv{"err", err.Error()})
		}
	}
	return withSize(raw)
}

func (s *Sandbox) afterDeleteGroups(b *broker) func(kmsg.Response) {
	return func(resp kmsg.Response) {
		r := resp.(*kmsg.DeleteGroupsResponse)
		for _, g := range r.Groups {
			if g.ErrorCode != 0 {
				continue
			}
			if err := s.offsets.remove(g.Group); err != nil {
				b.log.log("WARN", targetSandbox, "sandbox: offsets file not removed", kv{"group", g.Group}, kv{"err", err.Error()})
			}
		}
	}
}

// validTopicName applies Kafka's topic name rules (and so keeps topic
// directories inside the data dir).
func validTopicName(n string) error {
	if n == "" || n == "." || n == ".." || len(n) > 249 {
		return fmt.Errorf("invalid topic name %q: 1-249 characters, not . or ..", n)
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid topic name %q: only letters, digits, '.', '_' and '-'", n)
		}
	}
	if volume.ReservedTopicName(n) {
		return fmt.Errorf("invalid topic name %q: reserved by kaas", n)
	}
	return nil
}

// manifest is DATA/<topic>/<partition>/manifest.json.
type manifest struct {
	Epoch          uint32 `json:"epoch"`
	HighWatermark  int64  `json:"highWatermark"`
	LogStartOffset int64  `json:"logStartOffset"`
}

// manifestWriter keeps partition manifests current, writing only changes.
type manifestWriter struct {
	l    volume.Layout
	mu   sync.Mutex
	last map[tp]manifest
}

func newManifestWriter(l volume.Layout) *manifestWriter {
	return &manifestWriter{l: l, last: map[tp]manifest{}}
}

func (m *manifestWriter) write(topic string, part int32, mf manifest) error {
	if validTopicName(topic) != nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := tp{topic, part}
	if prev, ok := m.last[k]; ok && prev == mf {
		return nil
	}
	p := m.l.ManifestPath(topic, part)
	if p == "" {
		return nil
	}
	d := filepath.Dir(p)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	data, _ := json.Marshal(mf)
	if old, err := safefs.ReadFile(p); err == nil && bytes.Equal(old, data) {
		m.last[k] = mf
		return nil
	}
	if err := writeFileAtomic(p, data); err != nil {
		return err
	}
	m.last[k] = mf
	return nil
}

func sortedTPs(m map[tp]int) []tp {
	out := make([]tp, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].part < out[j].part
	})
	return out
}
