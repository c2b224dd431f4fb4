package logparse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// MaxLine is the longest line kept; longer ones are counted and skipped.
const MaxLine = 16 << 20

// chunkSize is the read size: big reads, few syscalls.
const chunkSize = 4 << 20

// anchors find candidate lines. Every recognized message contains one:
// "controller" (lease, published, "controller: broker set changed",
// recompute, stale epoch), "set changed" (Go's "broker set changed;
// triggering recompute"), "coordinator change".
var anchors = [][]byte{[]byte("controller"), []byte("set changed"), []byte("coordinator change")}

// The anchors are searched in one pass, Wu-Manber style: a shift table
// indexed by a hash of the trigram ending each window of wmM bytes. Most
// windows of ordinary log text end in a trigram that appears in no anchor's
// first wmM bytes, and the scan jumps wmM-2 bytes at a time.
const (
	wmM = 10
	wmQ = 3
)

// wmHash folds a trigram into 12 bits: the table (4 KB) stays in L1.
func wmHash(a, b, c byte) uint16 {
	return (uint16(a)<<6 ^ uint16(b)<<3 ^ uint16(c)) & (wmTable - 1)
}

const wmTable = 1 << 12

var wmShift = func() *[wmTable]uint8 {
	var t [wmTable]uint8
	for i := range t {
		t[i] = wmM - wmQ + 1
	}
	for _, p := range anchors {
		for j := wmQ - 1; j < wmM; j++ {
			h := wmHash(p[j-2], p[j-1], p[j])
			if s := uint8(wmM - 1 - j); s < t[h] {
				t[h] = s
			}
		}
	}
	return &t
}()

// nextCandidate returns the start of the first line at or after off that
// holds an anchor, and that line's end (index of its newline or len).
func nextCandidate(data []byte, off int) (int, int, bool) {
	shift := wmShift
	const full = wmM - wmQ + 1 // the shift of a trigram in no anchor
	i := off + wmM - 1
	for i < len(data) {
		s := shift[wmHash(data[i-2], data[i-1], data[i])]
		// Look one full jump ahead at the same time: the two table loads
		// do not depend on each other, which roughly doubles throughput on
		// text where almost every window jumps the full distance.
		if s == full && i+full < len(data) {
			s2 := shift[wmHash(data[i+full-2], data[i+full-1], data[i+full])]
			i += full
			s = s2
			if s == full {
				i += full
				continue
			}
		}
		if s != 0 {
			i += int(s)
			continue
		}
		st := i - (wmM - 1)
		w := data[st:]
		hit := false
		for _, a := range anchors {
			if len(w) >= len(a) && string(w[:len(a)]) == string(a) {
				hit = true
				break
			}
		}
		if !hit {
			i++
			continue
		}
		ls := bytes.LastIndexByte(data[:st], '\n') + 1
		if ls < off {
			ls = off
		}
		le := bytes.IndexByte(data[st:], '\n')
		if le < 0 {
			le = len(data)
		} else {
			le += st
		}
		return ls, le, true
	}
	return 0, 0, false
}

// Options tune a parse.
type Options struct {
	// Broker is the fallback broker for lines whose prefix, fields and
	// file name name none (--broker).
	Broker string
	// Source names the input in events ("-" for stdin).
	Source string
	// Workers scanning chunks in parallel; 0 means GOMAXPROCS.
	Workers int
	// OnRead, when set, is told how many bytes were read from an input
	// (for a progress line); it may be called from several goroutines.
	OnRead func(n int)
}

// countingReader reports every read to a callback.
type countingReader struct {
	r  io.Reader
	fn func(int)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.fn(n)
	}
	return n, err
}

// Parse reads one log stream (plain or gzip, detected by its magic bytes)
// and calls emit for each recognized line, in input order. Chunks of the
// input are scanned in parallel; emit is called from one goroutine.
func Parse(r io.Reader, opt Options, emit func(Event)) (Stats, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var st Stats
	st.Files = 1
	var in io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return st, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	p := &parser{opt: opt, emit: emit, st: &st, fileBroker: BrokerFromFileName(opt.Source)}
	err := p.run(in)
	if !p.sawKnown && !p.sniffKnown && p.sniffed > 0 {
		st.UnknownFormat = append(st.UnknownFormat, opt.Source)
	}
	return st, err
}

type parser struct {
	opt        Options
	emit       func(Event)
	st         *Stats
	fileBroker string
	sniffed    int  // written by the reader goroutine only
	sniffKnown bool // written by the reader goroutine only
	// Counters of the reader goroutine, merged once it is done.
	readBytes, readOverlong int64
	sawKnown                bool // written by the collector only
}

// chunk is a run of whole lines handed to a worker.
type chunk struct {
	idx   int
	buf   []byte // backing buffer, returned to the pool
	data  []byte
	final bool
	// skipped: lines dropped before this chunk (overlong), counted in order.
	skipped int64
}

type chunkResult struct {
	idx      int
	lines    int64
	skipped  int64
	evs      []Event // Line is relative to the chunk (1-based)
	st       Stats
	sawKnown bool
}

// run scans r on the configured number of workers: read cuts the input
// into chunks of whole lines, the workers parse chunks in any order, and
// the results are merged back in input order (lines numbered as in r).
func (p *parser) run(r io.Reader) error {
	workers := p.opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	work := make(chan chunk, workers)
	results := make(chan chunkResult, workers)
	pool := make(chan []byte, workers+2)
	for range workers + 2 {
		pool <- make([]byte, chunkSize)
	}
	wg := p.startScanners(workers, work, results, pool)
	var readErr error
	go func() {
		readErr = p.read(r, work, pool)
		close(work)
		wg.Wait()
		close(results)
	}()
	defer func() {
		// results is closed after the reader returned: its counters are final.
		p.st.Bytes += p.readBytes
		p.st.Overlong += p.readOverlong
	}()
	p.collect(results)
	return readErr
}

// startScanners starts the workers: each parses the chunks it takes from
// work, hands a full-sized buffer back to the pool and sends its result.
func (p *parser) startScanners(workers int, work <-chan chunk, results chan<- chunkResult, pool chan<- []byte) *sync.WaitGroup {
	wg := &sync.WaitGroup{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				res := p.scanChunk(c)
				if cap(c.buf) == chunkSize {
					pool <- c.buf[:chunkSize]
				}
				results <- res
			}
		}()
	}
	return wg
}

// collect merges the chunks' results in input order as they arrive (a
// result ahead of its turn waits in pending), numbering events by their
// line in the whole input.
func (p *parser) collect(results <-chan chunkResult) {
	pending := map[int]chunkResult{}
	next := 0
	var line int64
	for res := range results {
		pending[res.idx] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			line = p.merge(r, line)
		}
	}
}

// merge emits one chunk's events and adds its counts; line is the number
// of input lines before the chunk, and the result the number after it.
func (p *parser) merge(r chunkResult, line int64) int64 {
	line += r.skipped
	for _, e := range r.evs {
		e.Line += line
		p.emit(e)
	}
	line += r.lines
	p.st.Lines += r.lines + r.skipped
	p.st.Candidates += r.st.Candidates
	p.st.Events += r.st.Events
	p.st.Unparsed += r.st.Unparsed
	p.st.Overlong += r.st.Overlong
	p.st.Binary += r.st.Binary
	p.sawKnown = p.sawKnown || r.sawKnown
	return line
}

// chunkReader is read's state between two reads: the buffer being filled,
// how much of it the previous read left (a partial last line), and whether
// it is dropping the rest of an overlong line.
type chunkReader struct {
	p        *parser
	work     chan<- chunk
	pool     chan []byte
	buf      []byte
	carry    int
	skipping bool  // inside an overlong line: drop bytes to the next newline
	skipped  int64 // overlong lines dropped since the last chunk sent
	idx      int
}

// read splits the input into chunks of whole lines.
func (p *parser) read(r io.Reader, work chan<- chunk, pool chan []byte) error {
	cr := &chunkReader{p: p, work: work, pool: pool, buf: <-pool}
	for {
		n, err := io.ReadFull(r, cr.buf[cr.carry:])
		p.readBytes += int64(n)
		data := cr.buf[:cr.carry+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			cr.send(nil, true)
			return err
		}
		if cr.skipping {
			var ended bool
			if data, ended = cr.endSkip(data); !ended {
				cr.carry = 0
				if eof {
					cr.send(nil, true)
					return nil
				}
				continue
			}
		}
		if p.sniffed < 5 {
			p.sniff(data)
		}
		if eof {
			cr.send(data, true)
			return nil
		}
		cr.cut(data)
	}
}

// send hands data (lines of the current buffer) to the workers as the
// next chunk, with the overlong lines dropped before it.
func (cr *chunkReader) send(data []byte, final bool) {
	cr.work <- chunk{idx: cr.idx, buf: cr.buf, data: data, final: final, skipped: cr.skipped}
	cr.idx++
	cr.skipped = 0
}

// endSkip drops data up to the newline ending the overlong line being
// skipped; ended is false when data holds no newline (all of it dropped).
func (cr *chunkReader) endSkip(data []byte) (rest []byte, ended bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, false
	}
	cr.skipped++
	cr.skipping = false
	return data[i+1:], true
}

// cut sends data's whole lines and carries its partial last line into a
// fresh buffer for the next read. A full buffer without a newline grows up
// to MaxLine; past that the line is counted overlong and skipped.
func (cr *chunkReader) cut(data []byte) {
	cut := bytes.LastIndexByte(data, '\n')
	if cut < 0 {
		if len(cr.buf) < MaxLine {
			nb := make([]byte, min(MaxLine, len(cr.buf)*2))
			copy(nb, data)
			if cap(cr.buf) == chunkSize {
				cr.pool <- cr.buf
			}
			cr.buf = nb
			cr.carry = len(data)
			return
		}
		cr.p.readOverlong++
		cr.skipping = true
		cr.carry = 0
		return
	}
	rest := data[cut+1:]
	nb := <-cr.pool
	if len(rest) >= len(nb)/2 {
		// A long partial line: a bigger buffer, so the next read still
		// makes progress.
		cr.pool <- nb
		nb = make([]byte, min(MaxLine, max(chunkSize, 2*len(rest))))
	}
	cr.carry = copy(nb, rest)
	cr.send(data[:cut+1], false)
	cr.buf = nb
}

// scanChunk finds and parses the candidate lines of one chunk.
func (p *parser) scanChunk(c chunk) chunkResult {
	res := chunkResult{idx: c.idx, skipped: c.skipped}
	data := c.data
	nl := int64(bytes.Count(data, []byte{'\n'}))
	if c.final && len(data) > 0 && data[len(data)-1] != '\n' {
		nl++
	}
	res.lines = nl
	var lineNo int64
	prev, off := 0, 0
	for {
		s, e, ok := nextCandidate(data, off)
		if !ok {
			break
		}
		lineNo += int64(bytes.Count(data[prev:s], []byte{'\n'}))
		prev = s
		off = e
		res.st.Candidates++
		line := data[s:e]
		if bytes.IndexByte(line, 0) >= 0 {
			res.st.Binary++
		} else if ev, ok, recognized := parseLine(line); ok {
			res.sawKnown = true
			ev.Source = p.opt.Source
			ev.Line = lineNo + 1
			if ev.Broker == "" {
				ev.Broker = p.fileBroker
			}
			if ev.Broker == "" {
				ev.Broker = p.opt.Broker
			}
			res.st.Events++
			res.evs = append(res.evs, ev)
		} else if recognized {
			res.st.Unparsed++
		}
		if off >= len(data) {
			break
		}
	}
	return res
}

// sniff checks whether the first lines of an input look like a known log
// format, so a wrong file can be reported.
func (p *parser) sniff(data []byte) {
	for len(data) > 0 && p.sniffed < 5 {
		e := bytes.IndexByte(data, '\n')
		var ln []byte
		if e < 0 {
			ln, data = data, nil
		} else {
			ln, data = data[:e], data[e+1:]
		}
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		p.sniffed++
		if len(ln) > 4096 {
			ln = ln[:4096]
		}
		if looksKnown(ln) {
			p.sniffKnown = true
		}
	}
}

var fileBrokerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*-[0-9]+`)
})

// BrokerFromFileName guesses the broker from a log file name:
// "broker-skafka-0.log" → skafka-0, "kaas-1.log.gz" → kaas-1,
// "kaas-2-previous.txt" → kaas-2. "" when the name holds no "<name>-<n>".
func BrokerFromFileName(path string) string {
	if path == "" || path == "-" {
		return ""
	}
	base := filepath.Base(path)
	for _, ext := range []string{".gz", ".log", ".txt", ".json", ".jsonl", ".out"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, pre := range []string{"broker-", "broker_", "pod-", "logs-", "log-"} {
		base = strings.TrimPrefix(base, pre)
	}
	return fileBrokerRE().FindString(base)
}

// Input is one log source for ParseAll.
type Input struct {
	Path string    // file path, or "-" for Reader
	R    io.Reader // used when Path is "-"
}

// ParseAll parses every input (files in parallel), and returns the events
// merged by time (lines without a time keep their input order, after the
// timed ones of the same input), the summed stats, and one error per input
// that could not be read (the others are still parsed).
func ParseAll(inputs []Input, opt Options) ([]Event, Stats, []error) {
	type result struct {
		evs []Event
		st  Stats
		err error
	}
	res := make([]result, len(inputs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, in := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o := opt
			o.Source = in.Path
			var r io.Reader = in.R
			if in.Path != "-" {
				f, err := os.Open(in.Path)
				if err != nil {
					res[i].err = err
					return
				}
				defer f.Close()
				if st, err := f.Stat(); err == nil && st.IsDir() {
					res[i].err = fmt.Errorf("%s: is a directory", in.Path)
					return
				}
				r = f
				if opt.OnRead != nil {
					r = &countingReader{r: f, fn: opt.OnRead}
				}
			} else if r == nil {
				res[i].err = errors.New("-: no standard input")
				return
			}
			st, err := Parse(r, o, func(e Event) { res[i].evs = append(res[i].evs, e) })
			res[i].st = st
			if err != nil {
				res[i].err = fmt.Errorf("%s: %w", in.Path, err)
			}
		}()
	}
	wg.Wait()
	var all []Event
	var st Stats
	var errs []error
	for _, r := range res {
		all = append(all, r.evs...)
		st.Add(r.st)
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	SortEvents(all)
	return all, st, errs
}

// SortEvents orders events by time; events without a time sort after
// timed ones, keeping their input order.
func SortEvents(evs []Event) {
	slices.SortStableFunc(evs, func(a, b Event) int {
		az, bz := a.Time.IsZero(), b.Time.IsZero()
		switch {
		case az && bz:
			return 0
		case az:
			return 1
		case bz:
			return -1
		}
		return a.Time.Compare(b.Time)
	})
}
