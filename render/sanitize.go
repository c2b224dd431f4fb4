package render

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"unicode/utf8"
	"unsafe"
)

// Human output never carries a byte that could drive the terminal: a group
// id, member id, topic, path or log line may hold escape sequences, C1
// controls or bidi overrides (a name that prints reversed), and tables,
// notes, warnings, error lines and completion candidates are read on a
// terminal. Clean is the one function that neutralises them; machine
// formats (json, jsonl, yaml, csv) carry values unchanged instead.

// Clean returns s safe to print for people on one line. Escaped, as
// visible text:
//   - bytes that are not valid UTF-8: \xNN
//   - C0 controls and DEL (ESC is \x1b; \t \n \r are \t \n \r)
//   - C1 controls U+0080–U+009F: \u0085
//   - bidi overrides, embeddings and isolates U+202A–U+202E, U+2066–U+2069,
//     the marks U+200E, U+200F, U+061C, the separators U+2028, U+2029,
//     and U+FEFF: \u202e
//
// Everything else, backslashes included, is kept, so Clean(Clean(s)) ==
// Clean(s) and a clean string is returned as it is, without copying.
func Clean(s string) string { return clean(s, false) }

// CleanText is Clean for text of several lines: newlines and tabs are
// kept, everything else Clean escapes is escaped.
func CleanText(s string) string { return clean(s, true) }

func clean(s string, text bool) string {
	i := firstUnsafe(s, text)
	if i < 0 {
		return s
	}
	return string(appendClean(make([]byte, 0, len(s)+16), s, i, text))
}

// IsClean reports whether Clean would return s unchanged.
func IsClean(s string) bool { return firstUnsafe(s, false) < 0 }

// firstUnsafe returns the index of the first byte Clean would escape, or -1.
func firstUnsafe(s string, text bool) int {
	for i := 0; i < len(s); {
		// Eight printable ASCII bytes at a time (a 100,000-row table is
		// nearly all of them); a word holding anything else, a newline
		// included, is looked at byte by byte.
		if i+8 <= len(s) && printable8(load8(s[i:i+8])) {
			i += 8
			continue
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if text && (c == '\n' || c == '\t') {
				i++
				continue
			}
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// load8 is the first eight bytes of s, little-endian (one load).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// printable8 reports whether each of the eight bytes in w is in 0x20..0x7e.
func printable8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (w - 0x20*ones) & ^w & highs // some byte < 0x20 (or >= 0x80)
	del := (w ^ 0x7f*ones)                // zero where a byte is 0x7f
	isDel := (del - ones) & ^del & highs  // some byte == 0x7f
	return (w&highs)|below|isDel == 0
}

func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendClean appends s to dst with every unsafe byte or rune from index
// from on escaped (s[:from] is known to be safe).
func appendClean(dst []byte, s string, from int, text bool) []byte {
	dst = append(dst, s[:from]...)
	for i := from; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case text && (c == '\n' || c == '\t'):
				dst = append(dst, c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			default:
				dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case unsafeRune(r):
			dst = append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// CleanAll returns the cells with Clean applied (a copy only when one
// changes).
func CleanAll(cells []string) []string {
	var out []string
	for i, c := range cells {
		if d := Clean(c); d != c || out != nil {
			if out == nil {
				out = append(make([]string, 0, len(cells)), cells[:i]...)
			}
			out = append(out, d)
		}
	}
	if out == nil {
		return cells
	}
	return out
}

// paintMark opens a colour sequence written by Paint. The human writer
// turns "\x1b"+paintMark into "\x1b" and escapes every other ESC: the mark
// is random per process, so no value printed can forge a colour sequence.
var paintMark = func() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "\x00kaasctl-paint\x00"
	}
	return "{" + hex.EncodeToString(b[:]) + "}"
}()

// SGR codes for Paint.
const (
	Red    = "31"
	Yellow = "33"
	Green  = "32"
	Bold   = "1"
	Dim    = "2"
)

// Paint wraps s in an ANSI SGR colour (code such as "31" or "1") when the
// printer may use colour; s itself is cleaned. Only text printed through
// the printer's human writer (Output.Human) can carry colour.
func (p *Printer) Paint(code, s string) string {
	s = CleanText(s)
	if !p.Color {
		return s
	}
	return "\x1b" + paintMark + "[" + code + "m" + s + "\x1b" + paintMark + "[0m"
}

// cleanWriter passes human text through CleanText on its way to w,
// keeping newlines, tabs and the colour sequences of Paint. It holds back
// an incomplete UTF-8 sequence or paint mark at the end of a write until
// the next write or Flush.
type cleanWriter struct {
	w       io.Writer
	pending []byte
	buf     []byte
}

// NewCleanWriter returns a writer that neutralises what Clean escapes
// (newlines and tabs are kept); call Flush at the end.
func NewCleanWriter(w io.Writer) *cleanWriter { return &cleanWriter{w: w} }

func (cw *cleanWriter) Write(p []byte) (int, error) {
	data := p
	if len(cw.pending) > 0 {
		data = append(cw.pending, p...)
		cw.pending = nil
	}
	cut := safeCut(data)
	err := cw.emit(data[:cut])
	if cut < len(data) {
		cw.pending = append([]byte(nil), data[cut:]...)
	}
	return len(p), err
}

// Flush writes what is held back.
func (cw *cleanWriter) Flush() error {
	d := cw.pending
	cw.pending = nil
	return cw.emit(d)
}

func (cw *cleanWriter) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	// b is only read here: a string view of it, not a copy.
	s := unsafe.String(unsafe.SliceData(b), len(b))
	if firstUnsafe(s, true) < 0 {
		// Nothing to neutralise (ESC is unsafe, so no paint mark either):
		// the usual case, written as it is.
		_, err := cw.w.Write(b)
		return err
	}
	out := cw.buf[:0]
	for {
		esc := -1
		for i := 0; i < len(s); i++ {
			if s[i] == 0x1b && len(s)-i > len(paintMark) && s[i+1:i+1+len(paintMark)] == paintMark {
				esc = i
				break
			}
		}
		if esc < 0 {
			out = appendCleanText(out, s)
			break
		}
		out = appendCleanText(out, s[:esc])
		out = append(out, 0x1b)
		s = s[esc+1+len(paintMark):]
	}
	cw.buf = out
	_, err := cw.w.Write(out)
	return err
}

func appendCleanText(dst []byte, s string) []byte {
	i := firstUnsafe(s, true)
	if i < 0 {
		return append(dst, s...)
	}
	return appendClean(dst, s, i, true)
}

// safeCut returns how much of b can be cleaned now: all of it unless it
// ends inside a UTF-8 sequence or a possible paint mark.
func safeCut(b []byte) int {
	n := len(b)
	// A possible start of ESC+paintMark near the end.
	for i := max(0, n-len(paintMark)); i < n; i++ {
		if b[i] == 0x1b && string(b[i+1:]) == paintMark[:n-i-1] {
			return i
		}
	}
	// An incomplete rune at the end.
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if b[i] >= utf8.RuneSelf && !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return n
}
