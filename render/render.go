// Package render prints command results: tables for people (tablewriter on a
// TTY, plain aligned text when piped) and stable machine formats (json,
// jsonl, yaml, csv) with camelCase field names and [] rather than null.
//
// Commands build a typed view (structs with json tags) plus a Table, and
// hand both to a Printer; they never format output themselves.
package render

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/internal/parallel"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"
)

// Format is an output format (-o).
type Format string

const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	JSONL Format = "jsonl"
	YAML  Format = "yaml"
	CSV   Format = "csv"
)

// Formats lists every format, for help and completion.
var Formats = []Format{Table, Wide, JSON, JSONL, YAML, CSV}

// ParseFormat validates -o.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return Table, nil
	}
	for _, f := range Formats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q (choose one of: %s)", s, strings.Join(names, ", "))
}

// Machine reports whether f is meant for programs rather than people.
func (f Format) Machine() bool { return f == JSON || f == JSONL || f == YAML || f == CSV }

// Column is a table column. Wide columns appear only with -o wide (and
// always in csv).
type Column struct {
	Header string
	Wide   bool
}

// TableData is a table before rendering.
type TableData struct {
	Columns []Column
	Rows    [][]string
	// cells is where Add puts the next rows' cells: blocks as large as the
	// table so far (4 rows at first, at most tableBlock), so a 10,000-row
	// table makes about 45 allocations, not 10,000, and a 3-row table one
	// small one.
	cells []string
}

// tableBlock is the most rows' cells Add allocates at once.
const tableBlock = 256

// NewTable starts a table; a header ending in "+" is a wide-only column.
func NewTable(headers ...string) *TableData {
	t := &TableData{Columns: make([]Column, 0, len(headers))}
	for _, h := range headers {
		c := Column{Header: h}
		if strings.HasSuffix(h, "+") {
			c = Column{Header: strings.TrimSuffix(h, "+"), Wide: true}
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}

// Add appends a row; cells beyond the columns are dropped, missing ones blank.
func (t *TableData) Add(cells ...string) {
	n := len(t.Columns)
	if cap(t.cells)-len(t.cells) < n {
		t.cells = make([]string, 0, n*min(max(len(t.Rows), 4), tableBlock))
	}
	at := len(t.cells)
	t.cells = t.cells[:at+n]
	row := t.cells[at : at+n : at+n] // capped: an append to one row never reaches the next
	copy(row, cells)
	t.Rows = append(t.Rows, row)
}

// AddRows appends n rows, row i's cells filled by fill(i, cells) (as many
// cells as columns, blank to start with), on every core for a large table:
// fill may be called from several goroutines at once, and must only read
// what it shares.
func (t *TableData) AddRows(n int, fill func(i int, cells []string)) {
	cols := len(t.Columns)
	cells := make([]string, n*cols)
	first := len(t.Rows)
	t.Rows = slices.Grow(t.Rows, n)
	for i := range n {
		t.Rows = append(t.Rows, cells[i*cols:(i+1)*cols:(i+1)*cols])
	}
	rows := t.Rows[first:]
	parallel.ForRanges(n, min(runtime.GOMAXPROCS(0), n/alignedChunk), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			fill(i, rows[i])
		}
	})
}

// project keeps the columns shown in this mode.
func (t *TableData) project(wide bool) ([]string, [][]string) {
	var keep []int
	var hdr []string
	for i, c := range t.Columns {
		if wide || !c.Wide {
			keep = append(keep, i)
			hdr = append(hdr, c.Header)
		}
	}
	rows := make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		out := make([]string, len(keep))
		for j, i := range keep {
			out[j] = row[i]
		}
		rows[r] = out
	}
	return hdr, rows
}

// Output is one command result.
type Output struct {
	// Data is the machine document for json and yaml.
	Data any
	// Items is what jsonl prints, one element per line; when nil, Data is
	// used (each element if it is a slice, else Data itself on one line).
	Items any
	// Table is the human view; csv prints all of its columns.
	Table *TableData
	// Human, when set, replaces Table for table/wide output (charts,
	// sections). It still goes through the Printer.
	Human func(p *Printer) error
}

// Printer writes results in one format.
type Printer struct {
	Format Format
	Out    io.Writer
	Err    io.Writer
	TTY    bool // Out is a terminal
	Color  bool // colour allowed (TTY and no NO_COLOR)
	// Generation is the kaas generation the run assumes, added to every
	// document about a volume or cluster (schema_generation.go); nil:
	// none. Called when a document is printed.
	Generation func() any
}

// Wide reports whether wide columns are shown.
func (p *Printer) Wide() bool { return p.Format == Wide }

// Print renders o in the printer's format.
func (p *Printer) Print(o Output) error {
	switch p.Format {
	case JSON:
		return writeStamped(p.Out, o.Data, true, p.stampOf(o.Data))
	case YAML:
		return writeYAMLStamped(p.Out, o.Data, p.stampOf(o.Data))
	case JSONL:
		items := o.Items
		if items == nil {
			items = o.Data
		}
		return writeJSONL(p.Out, items, p.stampOf(o.Data))
	case CSV:
		if o.Table == nil {
			return fmt.Errorf("this command has no csv form; use -o json")
		}
		return WriteCSV(p.Out, o.Table)
	default:
		// People's output is written in many small pieces (blocks, key
		// lines, table rows): buffer them so a 10,000-group describe is
		// a few large writes, not a system call per cell.
		if _, buffered := p.Out.(*bufio.Writer); !buffered {
			bw := bufio.NewWriterSize(p.Out, 64<<10)
			bp := *p
			bp.Out = bw
			err := bp.print(o)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			return err
		}
		return p.print(o)
	}
}

func (p *Printer) print(o Output) error {
	if o.Human != nil {
		// Human text goes through Clean (colour from Paint kept).
		cw := NewCleanWriter(p.Out)
		hp := *p
		hp.Out = cw
		err := o.Human(&hp)
		if ferr := cw.Flush(); err == nil {
			err = ferr
		}
		return err
	}
	if o.Table == nil {
		return WriteJSON(p.Out, o.Data, true)
	}
	return p.Table(o.Table)
}

// BoxedRows is the most rows a table is drawn boxed (tablewriter) on a
// terminal; larger tables stream as aligned text, like piped output, so
// 10,000 rows cost what the JSON path costs.
const BoxedRows = 500

// Table renders a table for people: boxed on a TTY for small tables, plain
// aligned text (easy to grep and cut) when piped or large.
func (p *Printer) Table(t *TableData) error {
	if !p.TTY || len(t.Rows) > BoxedRows {
		return writeAligned(p.Out, t, p.Wide())
	}
	hdr, rows := t.project(p.Wide())
	for i, r := range rows {
		rows[i] = CleanAll(r)
	}
	tb := tablewriter.NewTable(p.Out,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Symbols:  tw.NewSymbols(tw.StyleLight),
			Settings: tw.Settings{Separators: tw.Separators{BetweenColumns: tw.On}, Lines: tw.Lines{ShowHeaderLine: tw.On}},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tb.Header(hdr)
	if err := tb.Bulk(rows); err != nil {
		return err
	}
	return tb.Render()
}

// plainCell is a cell as the aligned text shows it: "-" for empty, on one
// line; and its width: one column per rune (an invalid byte counts as
// one), as text/tabwriter counts. One pass over the bytes; it allocates
// only for the rare cell that needs cleaning.
func plainCell(c string) (string, int) {
	if c == "" {
		return "-", 1
	}
	ascii := true
	for i := 0; i < len(c); i++ {
		switch b := c[i]; {
		case b < 0x20 || b == 0x7f:
			// Control characters never reach a terminal (Clean escapes
			// them, tabs and newlines included).
			c = Clean(c)
			return c, utf8.RuneCountInString(c)
		case b >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && !IsClean(c) {
		c = Clean(c) // invalid UTF-8, C1 controls, bidi overrides
		return c, utf8.RuneCountInString(c)
	}
	if ascii {
		return c, len(c)
	}
	return c, utf8.RuneCountInString(c)
}

// writeAligned writes t as aligned text in two passes over its rows: the
// widths of the shown columns, then the rows through one buffer. The
// output is what text/tabwriter gives with padding 2 (every column but
// the last padded to its widest cell plus two spaces), without copying
// the table or writing cell by cell.
func writeAligned(w io.Writer, t *TableData, wide bool) error {
	var keep []int
	for i, c := range t.Columns {
		if wide || !c.Wide {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		_, err := io.WriteString(w, strings.Repeat("\n", 1+len(t.Rows)))
		return err
	}
	widths := make([]int, len(keep))
	for j, i := range keep {
		_, widths[j] = plainCell(t.Columns[i].Header)
	}
	workers := min(runtime.GOMAXPROCS(0), len(t.Rows)/alignedChunk)
	if workers > 1 {
		return writeAlignedOn(w, t, keep, widths, workers)
	}
	columnWidths(t.Rows, keep, widths)
	bw, own := w.(*bufio.Writer)
	if !own {
		// Pooled: describe --all writes two small tables per group, and a
		// fresh 64 KiB buffer for each was most of what it allocated.
		bw = alignedWriters.Get().(*bufio.Writer)
		bw.Reset(w)
		defer func() { bw.Reset(nil); alignedWriters.Put(bw) }()
	}
	var line []byte
	line = appendAlignedRow(line[:0], func(i int) string { return t.Columns[i].Header }, keep, widths)
	bw.Write(line)
	for _, row := range t.Rows {
		line = appendAlignedRow(line[:0], func(i int) string { return row[i] }, keep, widths)
		bw.Write(line)
	}
	if own {
		return nil
	}
	return bw.Flush()
}

// alignedChunk is the fewest rows an aligned-table worker takes: a table
// of fewer than two chunks is written on one core.
const alignedChunk = 4096

// columnWidths widens widths (of the kept columns but the last, which is
// not padded) to every row's cells.
func columnWidths(rows [][]string, keep, widths []int) {
	for _, row := range rows {
		for j, i := range keep[:len(keep)-1] {
			if _, n := plainCell(row[i]); n > widths[j] {
				widths[j] = n
			}
		}
	}
}

// appendAlignedRow appends one line: each kept cell as plainCell shows it,
// padded to its column's width and two spaces, but the last.
func appendAlignedRow(b []byte, cell func(i int) string, keep, widths []int) []byte {
	last := len(keep) - 1
	for j, i := range keep {
		c, n := plainCell(cell(i))
		b = append(b, c...)
		if j < last {
			b = appendSpaces(b, widths[j]-n+2)
		}
	}
	return append(b, '\n')
}

func appendSpaces(b []byte, n int) []byte {
	for n > len(spaces) {
		b = append(b, spaces...)
		n -= len(spaces)
	}
	return append(b, spaces[:n]...)
}

// writeAlignedOn is writeAligned for a large table on workers goroutines:
// the widths are measured over chunks at once, then the lines are made a
// batch of chunks at a time, each chunk into its own buffer, and written
// in order: the same bytes as on one core, with at most a batch in memory.
func writeAlignedOn(w io.Writer, t *TableData, keep, widths []int, workers int) error {
	local := make([][]int, workers)
	parallel.ForRanges(len(t.Rows), workers, func(k, lo, hi int) {
		local[k] = slices.Clone(widths)
		columnWidths(t.Rows[lo:hi], keep, local[k])
	})
	for _, l := range local {
		for j := range widths {
			widths[j] = max(widths[j], l[j])
		}
	}
	bufs := make([][]byte, workers)
	bufs[0] = appendAlignedRow(nil, func(i int) string { return t.Columns[i].Header }, keep, widths)
	if _, err := w.Write(bufs[0]); err != nil {
		return err
	}
	for start := 0; start < len(t.Rows); start += workers * alignedChunk {
		batch := t.Rows[start:min(start+workers*alignedChunk, len(t.Rows))]
		parallel.ForRanges(len(batch), workers, func(k, lo, hi int) {
			b := bufs[k][:0]
			for _, row := range batch[lo:hi] {
				b = appendAlignedRow(b, func(i int) string { return row[i] }, keep, widths)
			}
			bufs[k] = b
		})
		for _, b := range bufs {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

var alignedWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

const spaces = "                                                                "

// WriteJSON writes v as JSON without HTML escaping; nil slices become [];
// a string that is not valid UTF-8 gets a base64 sibling (Base64Suffix).
func WriteJSON(w io.Writer, v any, indent bool) error {
	if indent {
		return writeJSON(w, v, "", "  ")
	}
	return writeJSON(w, v, "", "")
}

// writeJSON is WriteJSON with encoding/json's indent prefix and step.
func writeJSON(w io.Writer, v any, prefix, step string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if prefix != "" || step != "" {
		enc.SetIndent(prefix, step)
	}
	v = NoNulls(v)
	if v != nil && hasInvalidUTF8(reflect.ValueOf(v), 0) {
		v = lossless(reflect.ValueOf(v), 0) // ids that are not UTF-8: see Base64Suffix
	}
	return enc.Encode(v)
}

// writeJSONL writes each element of a slice on its own line (anything
// else as one line), each object carrying the stamp (version 0: nothing).
func writeJSONL(w io.Writer, v any, st stamp) error {
	jw := NewJSONLWriter(w)
	jw.stamp = st
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		for i := 0; i < rv.Len(); i++ {
			// A pointer to the element: encoding it is the same, and a
			// million rows are not copied one by one into interfaces.
			e := rv.Index(i)
			if e.CanAddr() {
				e = e.Addr()
			}
			if err := jw.Write(e.Interface()); err != nil {
				return err
			}
		}
	} else if err := jw.Write(v); err != nil {
		return err
	}
	return jw.Flush()
}

// JSONLWriter writes one JSON value per line, each as WriteJSON writes it,
// for results produced one at a time (a stream never held in memory).
type JSONLWriter struct {
	bw *bufio.Writer
	// stamp is what each object carries first (version 0: nothing).
	stamp stamp
	// vw inserts the stamp into each line on the general path, made at
	// its first use.
	vw *versionWriter
	// enc encodes each value into buf for the fast path (fastLine); field
	// is the stamp's members, made once.
	enc   *json.Encoder
	buf   bytes.Buffer
	field []byte
}

// NewJSONLWriter starts a JSON-lines stream on w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{bw: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes v on its own line.
func (j *JSONLWriter) Write(v any) error {
	if ok, err := j.fastLine(v); ok {
		return err
	}
	return j.generalLine(v)
}

// generalLine writes v on its own line through NoNulls and lossless.
func (j *JSONLWriter) generalLine(v any) error {
	if j.stamp.version > 0 {
		if j.vw == nil {
			j.vw = newStampWriter(j.bw, j.stamp, "", "")
		}
		j.vw.reset()
		return writeJSON(j.vw, v, "", "")
	}
	return WriteJSON(j.bw, v, false)
}

// fastLine writes v as the general path would when encoding/json's own
// output shows that path would change nothing (encodeAsIs). It is false,
// having written nothing, otherwise; err is the writer's. A million-row list
// walks each row once instead of three times and makes no garbage per row.
func (j *JSONLWriter) fastLine(v any) (ok bool, err error) {
	if j.enc == nil {
		j.enc = json.NewEncoder(&j.buf)
		j.enc.SetEscapeHTML(false)
		if j.stamp.version > 0 {
			j.field = []byte(j.stamp.compact())
		}
	}
	if !encodeAsIs(j.enc, &j.buf, v) {
		return false, nil
	}
	b := j.buf.Bytes()
	if j.field == nil || len(b) < 2 || b[0] != '{' {
		_, err = j.bw.Write(b)
		return true, err
	}
	j.bw.WriteByte('{')
	j.bw.Write(j.field)
	if b[1] != '}' {
		j.bw.WriteByte(',')
	}
	_, err = j.bw.Write(b[1:])
	return true, err
}

// encodeAsIs encodes v with enc into buf (reset first) and reports
// whether that is what writeJSON writes: no "null" in it (no nil slice or
// map NoNulls would replace) and no \ufffd (no string that is not UTF-8,
// which lossless rewrites). False means writeJSON must write v.
func encodeAsIs(enc *json.Encoder, buf *bytes.Buffer, v any) bool {
	buf.Reset()
	if enc.Encode(v) != nil {
		return false
	}
	b := buf.Bytes()
	return !bytes.Contains(b, nullToken) && !bytes.Contains(b, replacementEscape)
}

var (
	nullToken         = []byte("null")
	replacementEscape = []byte(`\ufffd`)
)

// Flush writes what is buffered.
func (j *JSONLWriter) Flush() error { return j.bw.Flush() }

// JSONDocWriter writes an indented JSON document, as WriteJSON does, whose
// last field is an array given one element at a time: a list of a million
// groups is written without being held.
type JSONDocWriter struct {
	bw  *bufio.Writer
	buf bytes.Buffer
	n   int
	// enc encodes each element into buf (encodeAsIs), made at the first.
	enc *json.Encoder
}

// NewJSONDocWriter writes head (a struct or map: the document's other
// fields) and opens its array field named field.
func NewJSONDocWriter(w io.Writer, head any, field string) (*JSONDocWriter, error) {
	return newJSONDocWriter(w, head, field, stamp{})
}

// newJSONDocWriter is NewJSONDocWriter with the schema version as the
// document's first field (0: none).
func newJSONDocWriter(w io.Writer, head any, field string, st stamp) (*JSONDocWriter, error) {
	d := &JSONDocWriter{bw: bufio.NewWriterSize(w, 64<<10)}
	var hw io.Writer = &d.buf
	if st.version > 0 {
		hw = newStampWriter(&d.buf, st, "", "  ")
	}
	if err := writeJSON(hw, head, "", "  "); err != nil {
		return nil, err
	}
	h := bytes.TrimRight(d.buf.Bytes(), "\n")
	if len(h) == 0 || h[len(h)-1] != '}' {
		return nil, fmt.Errorf("json document head is not an object")
	}
	h = bytes.TrimRight(h[:len(h)-1], "\n ")
	d.bw.Write(h)
	if len(h) > 1 {
		d.bw.WriteByte(',')
	}
	name, _ := json.Marshal(field)
	d.bw.WriteString("\n  ")
	d.bw.Write(name)
	d.bw.WriteString(": [")
	return d, nil
}

// Add writes one element of the array.
func (d *JSONDocWriter) Add(v any) error {
	if d.enc == nil {
		d.enc = json.NewEncoder(&d.buf)
		d.enc.SetEscapeHTML(false)
		d.enc.SetIndent("    ", "  ")
	}
	if !encodeAsIs(d.enc, &d.buf, v) {
		d.buf.Reset()
		if err := writeJSON(&d.buf, v, "    ", "  "); err != nil {
			return err
		}
	}
	if d.n > 0 {
		d.bw.WriteByte(',')
	}
	d.n++
	d.bw.WriteString("\n    ")
	_, err := d.bw.Write(bytes.TrimRight(d.buf.Bytes(), "\n"))
	return err
}

// Close ends the array and the document and flushes.
func (d *JSONDocWriter) Close() error {
	if d.n > 0 {
		d.bw.WriteString("\n  ")
	}
	d.bw.WriteString("]\n}\n")
	return d.bw.Flush()
}

// WriteYAML writes v as YAML with the same field names and order as JSON.
func WriteYAML(w io.Writer, v any) error {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v, false); err != nil {
		return err
	}
	return writeYAMLFromJSON(w, buf.Bytes())
}

// writeYAMLFromJSON writes a JSON document as block YAML.
func writeYAMLFromJSON(w io.Writer, js []byte) error {
	var node yaml.Node
	if err := yaml.Unmarshal(yamlSafeJSON(js), &node); err != nil {
		return err
	}
	blockStyle(&node)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return err
	}
	return enc.Close()
}

// yamlSafeJSON escapes, inside JSON strings, the characters YAML does not
// read back as they are: DEL and C1 controls are refused by its parser,
// NEL (U+0085) is folded to a space, U+FFFE/U+FFFF are not allowed. JSON
// writes them raw; \uXXXX means the same to both.
func yamlSafeJSON(b []byte) []byte {
	var out []byte
	start := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff {
			out = append(out, b[start:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			start = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[start:]...)
}

// WriteCSV writes every column of t, with a header row.
func WriteCSV(w io.Writer, t *TableData) error {
	hdr, rows := t.project(true)
	cw := csv.NewWriter(w)
	if err := cw.Write(hdr); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// blockStyle drops the flow and quoting styles that parsing JSON leaves on
// the nodes, so the encoder writes ordinary block YAML (it still quotes a
// string that would otherwise read as another type).
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && hasControl(n.Value) {
		// Block scalars cannot carry every string (one made of newlines
		// reads back empty); double quotes with escapes can.
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// WriteJSONStreamed writes v (a struct or a pointer to one) as WriteJSON
// does with indentation, but the slice in its field named field in JSON one
// element at a time: a document whose bulk is one slice (a million-row
// plan) is never encoded whole in memory. The bytes are WriteJSON's; a v
// without such a field is written by WriteJSON.
func WriteJSONStreamed(w io.Writer, v any, field string) error {
	return writeJSONStreamed(w, v, field, stamp{})
}

// writeJSONStreamed is WriteJSONStreamed with the schema version as the
// document's first field (0: none).
func writeJSONStreamed(w io.Writer, v any, field string, st stamp) error {
	whole := func() error {
		if st.version > 0 {
			return writeStamped(w, v, true, st)
		}
		return WriteJSON(w, v, true)
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return whole()
	}
	fi := -1
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == field && f.IsExported() && f.Type.Kind() == reflect.Slice {
			fi = i
		}
	}
	if fi < 0 {
		return whole()
	}
	ev := rv.Field(fi)
	skel := reflect.New(rv.Type()).Elem()
	skel.Set(rv)
	skel.Field(fi).Set(reflect.MakeSlice(ev.Type(), 0, 0))
	var head bytes.Buffer
	var hw io.Writer = &head
	if st.version > 0 {
		hw = newStampWriter(&head, st, "", "  ")
	}
	if err := writeJSON(hw, skel.Addr().Interface(), "", "  "); err != nil {
		return err
	}
	marker := []byte("\n  " + strconv.Quote(field) + ": []")
	at := bytes.Index(head.Bytes(), marker)
	if at < 0 || bytes.Contains(head.Bytes()[at+len(marker):], marker) {
		return whole()
	}
	cut := at + len(marker) - 1 // at the closing ]
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head.Bytes()[:cut])
	var el bytes.Buffer
	for i := range ev.Len() {
		el.Reset()
		e := ev.Index(i)
		if err := writeJSON(&el, e.Interface(), "    ", "  "); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(el.Bytes(), []byte("\n")))
	}
	if ev.Len() > 0 {
		bw.WriteString("\n  ")
	}
	bw.Write(head.Bytes()[cut:])
	return bw.Flush()
}
