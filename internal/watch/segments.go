package watch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// segmentLog is what the offsets and the events journals share: a
// directory of JSON-lines segments named <prefix><UTC time of the first
// record>.jsonl (gzipped once closed), the active segment, rotation,
// retention of whole segments by size and age, and the segments' place in
// the journal's sequence. What a record holds, and how a write that fails
// is taken back, is each journal's own. A journal embeds one and binds it
// to its exported fields before each use.
type segmentLog struct {
	dir      string
	prefix   string // "offsets-", "events-"
	what     string // how errors name the journal: "journal", "events journal"
	maxBytes int64
	maxAge   time.Duration
	// list lists the segments in the journal's order (with their Seq).
	list     func(dir string) ([]segmentInfo, error)
	warnings *[]string
	// openFile opens a segment (os.OpenFile; tests inject failures).
	openFile func(path string) (segmentFile, error)

	f     segmentFile
	name  string
	size  int64
	start time.Time
	seq   int64 // the active (or last) segment's Seq
}

// segmentFile is the active segment as the writer uses it.
type segmentFile interface {
	Write([]byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

func openSegmentFile(path string) (segmentFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
}

type segmentInfo struct {
	name  string
	start time.Time
	size  int64
	// seq is the header's Seq (0: none recorded, or the header could not
	// be read).
	seq int64
}

const segmentTimeLayout = "20060102T150405.000000000Z"

// segmentName is the name of a segment whose first record is at t.
func segmentName(prefix string, t time.Time) string {
	return prefix + t.UTC().Format(segmentTimeLayout) + ".jsonl"
}

// segmentStart reads the time of the first record from a segment name
// (<prefix><time>.jsonl, or .jsonl.gz once rotated).
func segmentStart(prefix, name string) (time.Time, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(strings.TrimSuffix(s, ".gz"), ".jsonl")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(segmentTimeLayout, s)
	return t, err == nil
}

func (s *segmentLog) warn(w string) { *s.warnings = append(*s.warnings, w) }

// path is the active segment's path ("" before the first one).
func (s *segmentLog) path() string {
	if s.name == "" {
		return ""
	}
	return filepath.Join(s.dir, s.name)
}

// due reports whether the active segment is to rotate: past maxSize or
// age, or for the journal's own reason (also).
func (s *segmentLog) due(now time.Time, maxSize int64, age time.Duration, also bool) bool {
	return s.f != nil && (s.size >= maxSize || now.Sub(s.start) >= age || also)
}

func (s *segmentLog) mkdir() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("%s %s: %w", s.what, s.dir, err)
	}
	return nil
}

// create starts the active segment at t (a time to the millisecond: the
// name, which readers seek by, is never later than the first record),
// under the next free name, and fsyncs the directory.
func (s *segmentLog) create(t time.Time) error {
	openf := s.openFile
	if openf == nil {
		openf = openSegmentFile
	}
	for i := 0; ; i++ {
		name := segmentName(s.prefix, t.Add(time.Duration(i)))
		f, err := openf(filepath.Join(s.dir, name))
		if errors.Is(err, fs.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.what, s.dir, err)
		}
		s.f, s.name, s.size, s.start = f, name, 0, t
		break
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("%s %s: fsync of the directory: %w", s.what, s.dir, err)
	}
	return nil
}

// loadSeq continues the journal's sequence in a writer's first segment
// (an earlier run's segments, whatever their names say).
func (s *segmentLog) loadSeq() {
	if s.seq != 0 {
		return
	}
	if segs, err := s.list(s.dir); err == nil {
		for _, sg := range segs {
			s.seq = max(s.seq, sg.seq)
		}
	}
}

// closeSegment closes the active segment (the next write starts another).
func (s *segmentLog) closeSegment() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// compress gzips a closed segment; a failure is a warning.
func (s *segmentLog) compress(closed string) {
	if err := compressSegment(closed); err != nil {
		s.warn(fmt.Sprintf("%s: %v (the segment is kept uncompressed)", s.what, err))
	}
}

// retain removes whole segments, oldest first, while the journal is over
// maxBytes or a segment ended (ended says when) longer than maxAge before
// now. The last segment and the one named keep are kept, with those after
// it. Failures become warnings.
func (s *segmentLog) retain(now time.Time, keep string, ended func(segs []segmentInfo, i int) time.Time) {
	segs, err := s.list(s.dir)
	if err != nil {
		s.warn(err.Error())
		return
	}
	var total int64
	for _, sg := range segs {
		total += sg.size
	}
	for i, sg := range segs {
		if sg.name == keep || i == len(segs)-1 {
			break
		}
		tooBig := s.maxBytes > 0 && total > s.maxBytes
		tooOld := s.maxAge > 0 && now.Sub(ended(segs, i)) > s.maxAge
		if !tooBig && !tooOld {
			break
		}
		if err := os.Remove(filepath.Join(s.dir, sg.name)); err != nil {
			s.warn(fmt.Sprintf("%s retention: %v", s.what, err))
			break
		}
		total -= sg.size
	}
}

// readSegmentDir lists dir's segments named prefix…, in the order of the
// times in their names. A crash between compressing a segment and
// removing the original leaves both: the compressed one is complete (it
// was renamed into place after an fsync), so it is the one listed.
func readSegmentDir(dir, prefix string) ([]segmentInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segmentInfo
	for _, e := range ents {
		t, ok := segmentStart(prefix, e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		si := segmentInfo{name: e.Name(), start: t}
		if st, err := e.Info(); err == nil {
			si.size = st.Size()
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b segmentInfo) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(b.name, a.name) // .jsonl.gz before .jsonl
	})
	return slices.CompactFunc(out, func(a, b segmentInfo) bool { return a.start.Equal(b.start) }), nil
}

// openSegment opens a segment for reading, through gzip when its name
// ends in .gz. f is returned (to close) once the file is open, also when
// its gzip header is bad.
func openSegment(path string) (f *os.File, r io.Reader, err error) {
	f, err = os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, f, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return f, nil, err
	}
	return f, zr, nil
}

// segmentHeader is a segment's first line (trimmed); false when the
// segment or the line cannot be read.
func segmentHeader(path string) ([]byte, bool) {
	f, r, err := openSegment(path)
	if f != nil {
		defer f.Close()
	}
	if err != nil {
		return nil, false
	}
	line, err := bufio.NewReaderSize(io.LimitReader(r, 64<<10), 4<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return nil, false
	}
	return bytes.TrimSpace(line), true
}

// decodeLine decodes a record's line into v: one JSON value, alone.
func decodeLine(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// checkVersion checks a segment header's format version against the
// newest this kaasctl reads.
func checkVersion(v, newest int) error {
	if v < 1 {
		return errors.New("segment header without a version")
	}
	if v > newest {
		return fmt.Errorf("segment format version %d is newer than this kaasctl reads (%d)", v, newest)
	}
	return nil
}

// eachLine hands fn every line of a segment with its number; a last line
// without its newline is torn (a write cut short by a crash).
func eachLine(r io.Reader, fn func(line []byte, n int, torn bool)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		torn := err == io.EOF
		fn(line, n, torn)
		if torn {
			return nil
		}
	}
}

// maxJournalLine bounds one record (a snapshot of a group with very many
// partitions).
const maxJournalLine = 64 << 20

func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxJournalLine {
			return nil, fmt.Errorf("a line is over %d bytes", maxJournalLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			return bytes.TrimSuffix(out, []byte("\n")), nil
		}
		return out, err
	}
}

// compressSegment replaces a closed segment by its gzip (temp file, fsync,
// rename, fsync of the directory, then removal of the original).
func compressSegment(path string) error {
	if path == "" {
		return nil
	}
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".gz-*.tmp")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw := gzip.NewWriter(tmp)
	if _, err := io.Copy(zw, src); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path+".gz"); err != nil {
		return err
	}
	ok = true
	if err := syncDir(dir); err != nil {
		return err
	}
	return os.Remove(path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
