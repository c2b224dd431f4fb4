package volume

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// fastEnvelope parses the overwhelmingly common, clean offset file:
//
//	{"offsets":{"<topic>/<partition>":<n>,...},"metadata":{"<key>":"<str>",...}}
//
// with no escapes, no duplicate keys, valid keys, non-negative offsets and
// no metadata without an offset. Anything else returns ok=false and the
// general parser (which explains every oddity) takes over. The result is
// identical to the general parser's for every input it accepts.
func fastEnvelope(path string, data []byte) (*OffsetFile, bool) {
	return fastEnvelopeCore(path, data, true)
}

// OffsetSummary is what listing needs from a clean offset file.
type OffsetSummary struct {
	Format     string
	Partitions int
}

// summarizeFast validates a clean envelope and counts its partitions
// without allocating per entry. ok=false means "use the general parser".
func summarizeFast(data []byte) (OffsetSummary, bool) {
	var sc summaryCheck
	p := fastParser{b: data, sum: &sc}
	if !p.envelope() {
		return OffsetSummary{}, false
	}
	if !sc.valid() {
		return OffsetSummary{}, false
	}
	return OffsetSummary{Format: FormatEnvelope, Partitions: len(sc.off)}, true
}

// summaryCheck holds 64-bit key hashes to detect duplicate keys and
// metadata without an offset (a hash collision only sends the file to the
// general parser, never hides a problem that parser reports... except a
// metadata key colliding with an offset key, at odds of 2^-64).
type summaryCheck struct {
	off, meta []uint64
	offBuf    [16]uint64
	metaBuf   [16]uint64
}

func (c *summaryCheck) valid() bool {
	if len(c.off) == 0 {
		return false
	}
	slices.Sort(c.off)
	for i := 1; i < len(c.off); i++ {
		if c.off[i] == c.off[i-1] {
			return false
		}
	}
	slices.Sort(c.meta)
	for i, m := range c.meta {
		if i > 0 && m == c.meta[i-1] {
			return false
		}
		if _, found := slices.BinarySearch(c.off, m); !found {
			return false
		}
	}
	return true
}

func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// envelope runs the summary-mode grammar (p.sum set).
func (p *fastParser) envelope() bool {
	sc := p.sum
	sc.off, sc.meta = sc.offBuf[:0], sc.metaBuf[:0]
	return p.envelopeMembers(func() bool {
		return p.rawObject(func(k []byte) bool {
			n, ok := p.int()
			if !ok || n < 0 || !validKeyBytes(k) {
				return false
			}
			sc.off = append(sc.off, hash64(k))
			return true
		})
	}, func() bool {
		return p.rawObject(func(k []byte) bool {
			if _, ok := p.rawStr(); !ok {
				return false
			}
			sc.meta = append(sc.meta, hash64(k))
			return true
		})
	})
}

// envelopeMembers reads the envelope's top-level object, the whole input:
// an "offsets" member, read by offsets, and at most one "metadata" member,
// read by metadata, in either order. Anything else (another member, one of
// them twice, an empty object, bytes after it) is false, for the general
// parser to explain.
func (p *fastParser) envelopeMembers(offsets, metadata func() bool) bool {
	p.ws()
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.peek() == '}' {
		return false // {}: let the general parser report "no offsets"
	}
	seenOffsets, seenMeta := false, false
	for {
		p.ws()
		name, ok := p.rawStr()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		switch {
		case string(name) == "offsets" && !seenOffsets:
			seenOffsets = true
			if !offsets() {
				return false
			}
		case string(name) == "metadata" && !seenMeta:
			seenMeta = true
			if !metadata() {
				return false
			}
		default:
			return false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			return false
		}
		break
	}
	p.ws()
	return p.i == len(p.b) && seenOffsets
}

// validKeyBytes is SplitOffsetKey's rule without allocating.
func validKeyBytes(k []byte) bool {
	i := bytes.LastIndexByte(k, '/')
	if i <= 0 || i == len(k)-1 {
		return false
	}
	ps := k[i+1:]
	if len(ps) > 1 && ps[0] == '0' {
		return false
	}
	var n int64
	for _, c := range ps {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
		if n > 1<<31-1 {
			return false
		}
	}
	return true
}

func fastEnvelopeCore(path string, data []byte, _ bool) (*OffsetFile, bool) {
	p := fastParser{b: data}
	p.ws()
	if p.peek() != '{' {
		return nil, false
	}
	// Every entry has a colon, as do the two member names: sized once
	// (an over-count when metadata values hold colons).
	sz := max(1, bytes.Count(data, colon)-1)
	offs := make([]OffsetEntry, 0, sz)
	keys := make([]string, 0, sz)
	var metaK, metaV []string
	if !p.envelopeMembers(func() bool {
		return p.object(func(k string) bool {
			n, ok := p.int()
			if !ok || n < 0 {
				return false
			}
			topic, part, err := SplitOffsetKey(k)
			if err != nil {
				return false
			}
			keys = append(keys, k)
			offs = append(offs, OffsetEntry{Topic: topic, Partition: part, Offset: n})
			return true
		})
	}, func() bool {
		return p.object(func(k string) bool {
			v, ok := p.str()
			if !ok {
				return false
			}
			metaK = append(metaK, k)
			metaV = append(metaV, v)
			return true
		})
	}) {
		return nil, false
	}
	// Duplicate keys: encoding/json keeps the last; leave that to the
	// general path, as metadata without an offset or given twice.
	if len(offs) == 0 || hasDuplicate(keys) || !attachMetadata(offs, keys, metaK, metaV) {
		return nil, false
	}
	sortEntries(offs)
	return &OffsetFile{Path: path, Format: FormatEnvelope, Entries: offs}, true
}

// hasDuplicate reports whether a key occurs twice: up to smallKeys by
// comparing each with those before it, beyond that on a sorted copy.
func hasDuplicate(keys []string) bool {
	if len(keys) <= smallKeys {
		for i := 1; i < len(keys); i++ {
			if slices.Contains(keys[:i], keys[i]) {
				return true
			}
		}
		return false
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// attachMetadata sets each metadata value (metaV, keyed by metaK) on the
// entry of its key (offs[i] is keys[i]). It is false for metadata without
// an offset, or a key given twice: the general parser reports those.
func attachMetadata(offs []OffsetEntry, keys, metaK, metaV []string) bool {
	if len(metaK) == 0 {
		return true
	}
	idx := make(map[string]int, len(keys))
	for i, k := range keys {
		idx[k] = i
	}
	seen := make(map[string]bool, len(metaK))
	for i, mk := range metaK {
		j, ok := idx[mk]
		if !ok || seen[mk] {
			return false
		}
		seen[mk] = true
		offs[j].Metadata = metaV[i]
	}
	return true
}

var colon = []byte{':'}

// smallKeys: up to this many keys, duplicates are found by comparing each
// with those before it (no copy, no sort).
const smallKeys = 16

type fastParser struct {
	b   []byte
	i   int
	sum *summaryCheck
}

// rawStr is str without allocating: the bytes alias the input.
func (p *fastParser) rawStr() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	end := bytes.IndexByte(p.b[p.i:], '"')
	if end < 0 {
		return nil, false
	}
	s := p.b[p.i : p.i+end]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return nil, false
		}
	}
	if !utf8.Valid(s) {
		return nil, false
	}
	p.i += end + 1
	return s, true
}

// rawObject is object with aliased keys.
func (p *fastParser) rawObject(val func(k []byte) bool) bool {
	return members(p, p.rawStr, val)
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, valid UTF-8.
func (p *fastParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// int reads a JSON integer that fits int64 (no fraction or exponent).
func (p *fastParser) int() (int64, bool) {
	neg := p.eat('-')
	start := p.i
	var n uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if n > (1<<63-d)/10 {
			return 0, false
		}
		n = n*10 + d
		p.i++
	}
	digits := p.i - start
	if digits == 0 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) && strings.IndexByte(".eE", p.b[p.i]) >= 0 {
		return 0, false
	}
	if neg {
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// object reads {"k": <value read by val>, ...}.
func (p *fastParser) object(val func(k string) bool) bool {
	return members(p, p.str, val)
}

// members reads {"k": <value read by val>, ...} with each key read by key.
func members[K any](p *fastParser, key func() (K, bool), val func(k K) bool) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		k, ok := key()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !val(k) {
			return false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}
