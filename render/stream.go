package render

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
)

// Stream writes a result item by item in any output format, so a list of
// millions never sits in memory and a watch shows each event as it comes:
// json as one array, jsonl a line each, yaml one sequence, csv and tables
// row by row (tables aligned in blocks of 4096 rows), and free human lines
// (names cleaned, colour kept). Every write error is kept: the first one
// is what each later call and Close return, so a closed pipe stops the
// caller instead of being ignored.
type Stream struct {
	f       Format
	bw      *bufio.Writer
	hdr     []string
	shown   []bool
	csvw    *csv.Writer
	tw      *tabwriter.Writer
	pending int
	n       int
	err     error
	// vt and st: the stamp of the last item's type.
	vt reflect.Type
	st stamp
	// p gives the generation items carry (nil: none; WithGeneration).
	p *Printer
}

// WithGeneration makes every item carry the generation p assumes, as
// p's documents do.
func (s *Stream) WithGeneration(p *Printer) *Stream {
	s.p = p
	return s
}

// stampOf is the stamp of value's type (kept for the next item: a
// stream's items are of one type).
func (s *Stream) stampOf(value any) stamp {
	if t := reflect.TypeOf(value); t != s.vt || s.st.version == 0 {
		s.vt, s.st = t, s.p.stampOf(value)
	}
	return s.st
}

// NewStream starts a stream on w; headers ending in "+" are wide-only
// columns (csv has them all); title is printed above tables.
func NewStream(w io.Writer, f Format, headers []string, title string) *Stream {
	s := &Stream{f: f, bw: bufio.NewWriterSize(w, 256<<10), shown: make([]bool, len(headers))}
	for i, h := range headers {
		s.shown[i] = !strings.HasSuffix(h, "+") || f == Wide || f == CSV
		if s.shown[i] {
			s.hdr = append(s.hdr, strings.TrimSuffix(h, "+"))
		}
	}
	switch f {
	case JSON:
		s.write([]byte("[\n"))
	case CSV:
		s.csvw = csv.NewWriter(s.bw)
		if len(s.hdr) > 0 {
			s.keep(s.csvw.Write(s.hdr))
		}
	case Table, Wide:
		if title != "" {
			s.write([]byte(CleanText(title) + "\n"))
		}
	}
	return s
}

func (s *Stream) keep(err error) {
	if s.err == nil && err != nil {
		s.err = err
	}
}

func (s *Stream) write(b []byte) {
	if s.err == nil {
		_, err := s.bw.Write(b)
		s.keep(err)
	}
}

// Item writes one result. appendJSON appends its compact JSON object (no
// newline) to a buffer; value is what yaml encodes; row gives the table
// cells for every header.
func (s *Stream) Item(appendJSON func([]byte) []byte, value any, row func() []string) error {
	if s.err != nil {
		return s.err
	}
	switch s.f {
	case JSON:
		if s.n > 0 {
			s.write([]byte(",\n"))
		}
		s.write(appendStampedObject(s.bw.AvailableBuffer(), s.stampOf(value), appendJSON))
	case JSONL:
		// Append straight into the writer's free space when it fits.
		s.write(append(appendStampedObject(s.bw.AvailableBuffer(), s.stampOf(value), appendJSON), '\n'))
	case YAML:
		s.keep(writeYAMLStamped(s.bw, []any{value}, s.stampOf(value)))
	default:
		cells := make([]string, 0, len(s.hdr))
		for i, c := range row() {
			if s.shown[i] {
				cells = append(cells, c)
			}
		}
		if s.f == CSV {
			s.keep(s.csvw.Write(cells))
			break
		}
		if s.tw == nil {
			s.tw = tabwriter.NewWriter(s.bw, 0, 0, 2, ' ', 0)
			_, err := fmt.Fprintln(s.tw, strings.Join(s.hdr, "\t"))
			s.keep(err)
		}
		for i := range cells {
			cells[i] = Clean(Dash(cells[i]))
		}
		_, err := fmt.Fprintln(s.tw, strings.Join(cells, "\t"))
		s.keep(err)
		if s.pending++; s.pending == 4096 {
			s.keep(s.tw.Flush())
			s.tw, s.pending = nil, 0
		}
	}
	s.n++
	return s.err
}

// Event writes one event of a live stream in a machine format: a JSON
// line (json and jsonl), a one-item yaml sequence, or csv rows (cells in
// header order). Human formats write Lines instead.
func (s *Stream) Event(value any, rows ...[]string) error {
	if s.err != nil {
		return s.err
	}
	switch s.f {
	case JSON, JSONL:
		s.keep(writeStamped(s.bw, value, false, s.stampOf(value)))
	case YAML:
		s.keep(writeYAMLStamped(s.bw, []any{value}, s.stampOf(value)))
	case CSV:
		for _, r := range rows {
			s.keep(s.csvw.Write(r))
		}
	}
	s.n++
	return s.err
}

// Lines writes human lines: control characters in names are neutralised
// and Paint's colour is kept.
func (s *Stream) Lines(lines ...string) error {
	if s.err != nil || len(lines) == 0 {
		return s.err
	}
	hw := NewCleanWriter(s.bw)
	s.keep(Lines(hw, lines...))
	s.keep(hw.Flush())
	return s.err
}

// Format is the stream's output format.
func (s *Stream) Format() Format { return s.f }

// Count is the number of items and events written.
func (s *Stream) Count() int { return s.n }

// Flush pushes out what was written so far (a live stream flushes after
// each event).
func (s *Stream) Flush() error {
	if s.tw != nil && s.err == nil {
		s.keep(s.tw.Flush())
		s.tw, s.pending = nil, 0
	}
	if s.csvw != nil && s.err == nil {
		s.csvw.Flush()
		s.keep(s.csvw.Error())
	}
	if s.err == nil {
		s.keep(s.bw.Flush())
	}
	return s.err
}

// Close ends the document and flushes.
func (s *Stream) Close() error {
	switch s.f {
	case JSON:
		if s.n > 0 {
			s.write([]byte("\n"))
		}
		s.write([]byte("]\n"))
	case YAML:
		if s.n == 0 {
			s.write([]byte("[]\n"))
		}
	}
	return s.Flush()
}
