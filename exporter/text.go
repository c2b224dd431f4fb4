package exporter

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"hash/crc32"
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
	// zs is, per family, its compressed text once it passed zAfter (see
	// compact).
	zs []*zseg
}

// textBuf is one family's samples as a list of chunks: it grows without
// copying what it holds (a bytes.Buffer doubles, so a 100,000-group page
// allocated three times its size while it was written).
type textBuf struct {
	chunks [][]byte
	// spare are chunks already compressed, written again (see compact).
	spare [][]byte
	// n is every byte written, held those not yet compressed.
	n, held int
}

// maxChunk caps a chunk (past it, a new chunk is started rather than the
// last one grown).
const maxChunk = 256 << 10

func (b *textBuf) grow(min int) {
	if k := len(b.spare); k > 0 && cap(b.spare[k-1]) >= min {
		b.chunks = append(b.chunks, b.spare[k-1])
		b.spare = b.spare[:k-1]
		return
	}
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
		b.held += m
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
	b.held++
	return nil
}

func (b *textBuf) WriteRune(r rune) (int, error) {
	var tmp [utf8.UTFMax]byte
	return b.WriteString(string(tmp[:utf8.EncodeRune(tmp[:], r)]))
}

func (b *textBuf) Len() int { return b.n }

// newTextWriter sizes each family's buffer from hint (the sizes of the last
// refresh, see sizes), so a refresh writes without regrowing (up to
// zAfter: past it, the text is compressed as it comes).
func newTextWriter(hint []int) *textWriter {
	w := &textWriter{bufs: make([]textBuf, len(families))}
	for i := range min(len(hint), len(w.bufs)) {
		w.bufs[i].Grow(min(hint[i]+hint[i]/8, zAfter))
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
	if b.held >= zAfter {
		w.compact(f.idx)
	}
	return struct{}{}
}

// zAfter is how much text of one family is held before it is compressed:
// past it, the family's samples go into a compressed piece of their own as
// they are written, so a 100,000-group page (20 MB of text) is never held
// whole, only compressed (2 MB).
const zAfter = 1 << 20

// zseg is a piece of the page compressed as it is written: raw DEFLATE
// blocks, none final, ending on a byte boundary once ended (a sync flush),
// so pieces concatenate into one stream; and its text's CRC-32 and length,
// for the one gzip member a scrape makes of them (zpage).
type zseg struct {
	out bytes.Buffer
	fw  *flate.Writer
	crc uint32
	n   int
}

func newZseg() *zseg {
	z := &zseg{}
	z.fw, _ = flate.NewWriter(&z.out, flate.BestSpeed)
	return z
}

func (z *zseg) Write(p []byte) (int, error) {
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.n += len(p)
	return z.fw.Write(p)
}

// end flushes the piece to a byte boundary without a final block.
func (z *zseg) end() { z.fw.Flush() }

// compact compresses family i's text held so far into its piece, the
// first time after its HELP and TYPE lines, and keeps its chunks to write
// again.
func (w *textWriter) compact(i int) {
	if w.zs == nil {
		w.zs = make([]*zseg, len(w.bufs))
	}
	z := w.zs[i]
	if z == nil {
		z = newZseg()
		w.zs[i] = z
		writeHead(z, families[i])
	}
	b := &w.bufs[i]
	for _, c := range b.chunks {
		z.Write(c)
	}
	// The chunks are written again, the last (the largest) first.
	for k := range b.chunks {
		b.spare = append(b.spare, b.chunks[k][:0])
	}
	b.chunks = b.chunks[:0]
	b.held = 0
}

// page is the exposition compressed, in family order: each large family's
// own piece, the small ones between them together. It empties w.
func (w *textWriter) page() zpage {
	var p zpage
	var run *zseg // the piece of the small families in a row
	endRun := func() {
		if run != nil {
			p.add(run)
			run = nil
		}
	}
	for i, f := range families {
		b := &w.bufs[i]
		if b.Len() == 0 {
			continue
		}
		if w.zs != nil && w.zs[i] != nil {
			endRun()
			w.compact(i)
			p.add(w.zs[i])
			w.zs[i] = nil
			b.chunks, b.spare = nil, nil
			continue
		}
		if run == nil {
			run = newZseg()
		}
		writeHead(run, f)
		for _, c := range b.chunks {
			run.Write(c)
		}
		b.chunks, b.spare = nil, nil
	}
	endRun()
	return p
}

// zpage is a refresh's exposition compressed once: one raw DEFLATE stream
// left open (no final block), with its text's CRC-32 and length. A scrape
// closes it as ONE gzip member with the exporter's own metrics after it
// (writeGzip): a body of several members is valid gzip, but curl
// --compressed and some other readers stop at the first member.
type zpage struct {
	deflate []byte
	crc     uint32
	n       int
}

// add appends an ended piece.
func (p *zpage) add(z *zseg) {
	z.end()
	p.deflate = append(p.deflate, z.out.Bytes()...)
	p.crc = crcConcat(p.crc, z.crc, z.n)
	p.n += z.n
}

// crcConcat is the CRC-32 (IEEE) of a text a followed by b, from a's CRC,
// b's CRC and b's length: CRC-32 is affine over GF(2), so a's register is
// carried over b's length of zero bits by squaring the 32×32 matrix of one
// zero bit (O(log len(b)) matrix products, as zlib's crc32_combine), and
// b's CRC added.
func crcConcat(crcA, crcB uint32, lenB int) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var odd, even gf2Matrix
	odd[0] = 0xedb88320 // the reflected polynomial: one zero bit
	for n, row := 1, uint32(1); n < 32; n, row = n+1, row<<1 {
		odd[n] = row
	}
	even.square(&odd) // two zero bits
	odd.square(&even) // four
	for n := uint64(lenB); ; {
		even.square(&odd) // a byte, then every second doubling
		if n&1 != 0 {
			crcA = even.times(crcA)
		}
		if n >>= 1; n == 0 {
			break
		}
		odd.square(&even)
		if n&1 != 0 {
			crcA = odd.times(crcA)
		}
		if n >>= 1; n == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// gf2Matrix is a 32×32 matrix over GF(2), a column a word.
type gf2Matrix [32]uint32

// times is m·v.
func (m *gf2Matrix) times(v uint32) uint32 {
	var sum uint32
	for i := 0; v != 0; i, v = i+1, v>>1 {
		if v&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}

// square sets m to a·a.
func (m *gf2Matrix) square(a *gf2Matrix) {
	for n := range m {
		m[n] = a.times(a[n])
	}
}

// gzipHeader starts a gzip member: DEFLATE, no flags, no time, OS unknown.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// finalBlock is an empty final DEFLATE block (fixed codes, end of block):
// it closes the page's open stream for a reader.
var finalBlock = []byte{0x03, 0x00}

// writeGzip writes the page and then tail as one gzip member; fw is a
// DEFLATE writer to reuse (it is reset to w).
func (p *zpage) writeGzip(w io.Writer, tail []byte, fw *flate.Writer) error {
	if _, err := w.Write(gzipHeader); err != nil {
		return err
	}
	if _, err := w.Write(p.deflate); err != nil {
		return err
	}
	fw.Reset(w)
	if _, err := fw.Write(tail); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	var tr [8]byte
	crc := crc32.Update(p.crc, crc32.IEEETable, tail)
	size := uint32(p.n + len(tail))
	for i := 0; i < 4; i++ {
		tr[i] = byte(crc >> (8 * i))
		tr[4+i] = byte(size >> (8 * i))
	}
	_, err := w.Write(tr[:])
	return err
}

// text reads the page's text back, decompressing as it is read.
func (p *zpage) text() io.ReadCloser {
	return flate.NewReader(io.MultiReader(bytes.NewReader(p.deflate), bytes.NewReader(finalBlock)))
}

// writeHead writes a family's HELP and TYPE lines; it returns their length.
func writeHead(out io.Writer, f *family) int {
	var head bytes.Buffer
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
	return head.Len()
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
