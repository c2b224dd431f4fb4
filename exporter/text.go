package exporter

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The metrics of a refresh are written once, in the Prometheus text
// exposition format (version 0.0.4), when the refresh ends; a scrape copies
// the bytes (or their gzip). Building 100,000s of client_golang const
// metrics and encoding them again on every scrape costs seconds at 10,000
// groups; this costs one pass per refresh.

// Label values must be UTF-8: Prometheus rejects a whole scrape with one
// invalid value, so one group id that is not UTF-8 (kaas accepts any
// bytes) would hide every group's series. Such a value is written with
// each invalid byte replaced by U+FFFD, and a sibling label NAME_base64
// holds its exact bytes in standard base64, as the JSON outputs' FIELDBase64
// field does: group="bad\uFFFD",group_base64="YmFk/w==". Valid values never
// get the sibling, so their series are unchanged.
const Base64LabelSuffix = "_base64"

const (
	gaugeType   = "gauge"
	counterType = "counter"
)

// family is one metric family: its name, type, help and label names.
type family struct {
	idx    int
	name   string
	typ    string
	help   string
	labels []string
}

var families []*family

// fam declares a family (package init only).
func fam(typ, name, help string, labels ...string) *family {
	f := &family{idx: len(families), name: name, typ: typ, help: help, labels: labels}
	families = append(families, f)
	return f
}

// textWriter collects the samples of one refresh per family.
type textWriter struct {
	bufs []textBuf
}

// textBuf is one family's samples as a list of chunks: it grows without
// copying what it holds (a bytes.Buffer doubles, so a 100,000-group page
// allocated three times its size while it was written).
type textBuf struct {
	chunks [][]byte
	n      int
}

// maxChunk caps a chunk (past it, a new chunk is started rather than the
// last one grown).
const maxChunk = 256 << 10

func (b *textBuf) grow(min int) {
	size := 4 << 10
	if k := len(b.chunks); k > 0 {
		size = max(size, min2(2*cap(b.chunks[k-1]), maxChunk))
	}
	b.chunks = append(b.chunks, make([]byte, 0, max(size, min)))
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// Grow makes room for n more bytes in one chunk.
func (b *textBuf) Grow(n int) {
	if n <= 0 {
		return
	}
	if k := len(b.chunks); k == 0 || cap(b.chunks[k-1])-len(b.chunks[k-1]) < n {
		b.chunks = append(b.chunks, make([]byte, 0, n))
	}
}

func (b *textBuf) WriteString(s string) (int, error) {
	n := len(s)
	for len(s) > 0 {
		k := len(b.chunks)
		if k == 0 || len(b.chunks[k-1]) == cap(b.chunks[k-1]) {
			b.grow(0)
			k++
		}
		c := b.chunks[k-1]
		m := copy(c[len(c):cap(c)], s)
		b.chunks[k-1] = c[:len(c)+m]
		b.n += m
		s = s[m:]
	}
	return n, nil
}

func (b *textBuf) WriteByte(c byte) error {
	k := len(b.chunks)
	if k == 0 || len(b.chunks[k-1]) == cap(b.chunks[k-1]) {
		b.grow(0)
		k++
	}
	b.chunks[k-1] = append(b.chunks[k-1], c)
	b.n++
	return nil
}

func (b *textBuf) WriteRune(r rune) (int, error) {
	var tmp [utf8.UTFMax]byte
	return b.WriteString(string(tmp[:utf8.EncodeRune(tmp[:], r)]))
}

func (b *textBuf) Len() int { return b.n }

// newTextWriter sizes each family's buffer from hint (the sizes of the last
// refresh, see sizes), so a refresh writes without regrowing.
func newTextWriter(hint []int) *textWriter {
	w := &textWriter{bufs: make([]textBuf, len(families))}
	for i := range min(len(hint), len(w.bufs)) {
		w.bufs[i].Grow(hint[i] + hint[i]/8)
	}
	return w
}

// sizes is the size of each family's samples, the next refresh's hint.
func (w *textWriter) sizes() []int {
	out := make([]int, len(w.bufs))
	for i := range w.bufs {
		out[i] = w.bufs[i].Len()
	}
	return out
}

// sample adds one sample; it returns struct{} so call sites read add(gauge(...)).
func (w *textWriter) sample(f *family, v float64, lvs ...string) struct{} {
	if len(lvs) != len(f.labels) {
		panic("exporter: " + f.name + ": wrong number of label values")
	}
	b := &w.bufs[f.idx]
	b.WriteString(f.name)
	if len(lvs) > 0 {
		b.WriteByte('{')
		invalid := false
		for i, l := range f.labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l)
			b.WriteString(`="`)
			if utf8.ValidString(lvs[i]) {
				writeEscaped(b, lvs[i], true)
			} else {
				invalid = true
				writeEscaped(b, strings.ToValidUTF8(lvs[i], "\uFFFD"), true)
			}
			b.WriteByte('"')
		}
		if invalid {
			// The exact bytes of each value that is not UTF-8, in a
			// sibling label (the JSON outputs' groupBase64 convention).
			for i, l := range f.labels {
				if !utf8.ValidString(lvs[i]) {
					b.WriteByte(',')
					b.WriteString(l)
					b.WriteString(Base64LabelSuffix + `="`)
					b.WriteString(base64.StdEncoding.EncodeToString([]byte(lvs[i])))
					b.WriteByte('"')
				}
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
	return struct{}{}
}

// bytes is the exposition: every family with samples, in declaration order.
func (w *textWriter) bytes() []byte {
	n := 0
	for i := range w.bufs {
		n += w.bufs[i].Len() + 256
	}
	var out bytes.Buffer
	out.Grow(n)
	w.drain(&out)
	return out.Bytes()
}

// gzip is the exposition gzipped and its length uncompressed. The text is
// never held whole: each chunk is compressed and let go in turn (a
// 100,000-group page is 20 MB of text and 2 MB of gzip).
func (w *textWriter) gzip() ([]byte, int) {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	n := w.drain(zw)
	zw.Close()
	return out.Bytes(), n
}

// drain writes the exposition to out and empties w; it returns the bytes
// written.
func (w *textWriter) drain(out io.Writer) int {
	var head bytes.Buffer
	n := 0
	for i, f := range families {
		if w.bufs[i].Len() == 0 {
			continue
		}
		head.Reset()
		head.WriteString("# HELP ")
		head.WriteString(f.name)
		head.WriteByte(' ')
		writeEscaped(&head, f.help, false)
		head.WriteString("\n# TYPE ")
		head.WriteString(f.name)
		head.WriteByte(' ')
		head.WriteString(f.typ)
		head.WriteByte('\n')
		out.Write(head.Bytes())
		n += head.Len()
		for j, c := range w.bufs[i].chunks {
			out.Write(c)
			n += len(c)
			w.bufs[i].chunks[j] = nil
		}
		w.bufs[i].chunks = nil
	}
	return n
}

// writeEscaped escapes backslash and newline (and, in label values, the
// double quote), as the text format requires.
func writeEscaped(b interface {
	WriteString(string) (int, error)
	WriteRune(rune) (int, error)
}, s string, quote bool) {
	if !strings.ContainsAny(s, "\\\n\"") {
		b.WriteString(s)
		return
	}
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// FamilyDoc describes one metric family the refresh writes (for 'kaasctl
// help formats exporter').
type FamilyDoc struct {
	Name, Type, Help string
	Labels           []string
}

// Families lists the metric families a refresh writes, in page order.
func Families() []FamilyDoc {
	out := make([]FamilyDoc, len(families))
	for i, f := range families {
		out[i] = FamilyDoc{Name: f.name, Type: f.typ, Help: f.help, Labels: slices.Clone(f.labels)}
	}
	return out
}
