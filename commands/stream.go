package commands

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kaasctl/kaasctl/render"
)

// readKeys calls fn with each non-blank line of r (CR LF trimmed), without
// holding more than one line; a line longer than the buffer is collected
// whole. fn's slice is only valid during the call.
func readKeys(r io.Reader, fn func(key []byte) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if key := bytes.TrimRight(line, "\r\n"); len(key) > 0 {
			if ferr := fn(key); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading keys from standard input: %w", err)
		}
	}
}

// rowStream writes a result list item by item in any output format, so a
// stream of millions never sits in memory: json as one array, jsonl a line
// each, yaml one sequence, csv and tables row by row (tables aligned in
// blocks of 4096 rows).
type rowStream struct {
	f       render.Format
	bw      *bufio.Writer
	hdr     []string
	shown   []bool
	csvw    *csv.Writer
	tw      *tabwriter.Writer
	pending int
	n       int
}

// newRowStream starts a stream on w; headers ending in "+" are wide-only
// columns; title is printed above tables.
func newRowStream(w io.Writer, f render.Format, headers []string, title string) *rowStream {
	s := &rowStream{f: f, bw: bufio.NewWriterSize(w, 256<<10), shown: make([]bool, len(headers))}
	for i, h := range headers {
		s.shown[i] = !strings.HasSuffix(h, "+") || f == render.Wide || f == render.CSV
		if s.shown[i] {
			s.hdr = append(s.hdr, strings.TrimSuffix(h, "+"))
		}
	}
	switch f {
	case render.JSON:
		s.bw.WriteString("[\n")
	case render.CSV:
		s.csvw = csv.NewWriter(s.bw)
		s.csvw.Write(s.hdr)
	case render.Table, render.Wide:
		if title != "" {
			fmt.Fprintln(s.bw, render.CleanText(title))
		}
	}
	return s
}

// Item writes one result. appendJSON appends its compact JSON object (no
// newline) to a buffer; value is what yaml encodes; row gives the table
// cells for every header.
func (s *rowStream) Item(appendJSON func([]byte) []byte, value any, row func() []string) error {
	switch s.f {
	case render.JSON:
		if s.n > 0 {
			s.bw.WriteString(",\n")
		}
		s.bw.Write(appendJSON(s.bw.AvailableBuffer()))
	case render.JSONL:
		// Append straight into the writer's free space when it fits.
		b := append(appendJSON(s.bw.AvailableBuffer()), '\n')
		s.bw.Write(b)
	case render.YAML:
		if err := render.WriteYAML(s.bw, []any{value}); err != nil {
			return err
		}
	default:
		cells := make([]string, 0, len(s.hdr))
		for i, c := range row() {
			if s.shown[i] {
				cells = append(cells, c)
			}
		}
		if s.f == render.CSV {
			s.csvw.Write(cells)
			break
		}
		if s.tw == nil {
			s.tw = tabwriter.NewWriter(s.bw, 0, 0, 2, ' ', 0)
			fmt.Fprintln(s.tw, strings.Join(s.hdr, "\t"))
		}
		for i := range cells {
			cells[i] = render.Clean(orDashStr(cells[i]))
		}
		fmt.Fprintln(s.tw, strings.Join(cells, "\t"))
		if s.pending++; s.pending == 4096 {
			s.tw.Flush()
			s.tw, s.pending = nil, 0
		}
	}
	s.n++
	return nil
}

// Count is the number of items written.
func (s *rowStream) Count() int { return s.n }

// Close ends the document and flushes.
func (s *rowStream) Close() error {
	switch s.f {
	case render.JSON:
		if s.n > 0 {
			s.bw.WriteString("\n")
		}
		s.bw.WriteString("]\n")
	case render.CSV:
		s.csvw.Flush()
		if err := s.csvw.Error(); err != nil {
			return err
		}
	case render.YAML:
		if s.n == 0 {
			s.bw.WriteString("[]\n")
		}
	default:
		if s.tw != nil {
			s.tw.Flush()
		}
	}
	return s.bw.Flush()
}
