package inspect

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// The health window's samples, compact. A served exporter keeps every
// group's observations for the window (20 at the defaults): as
// HealthSample values that is about 9 KB a group (partition keys in every
// sample, 150 bytes of fields mostly empty), 1.6–2 GB resident at 100,000
// groups. A sampleStore keeps a group's partition keys once, its samples'
// offsets and times in one byte stream of varints, and what is rare
// (errors, anomalies, an odd modification time) out of line; an
// evaluation decodes the window into a worker's scratch (windowView) and
// runs on HealthSample values as before, so what is evaluated is exactly
// what was added.
//
// The stream holds the samples oldest first, each [length][header][time
// id delta][modification time][keys][entries]:
//   - the header's bits: allKeys (the sample's keys are the group's key
//     table, in order), hasRare, FileFollowed, the rewrite kind (2 bits)
//     and the modification time's code (2 bits: zero, the newer sample's,
//     a varint back from the sample's time, or exact out of line);
//   - the time is an id in the window's clock (every group observed by
//     one refresh shares its time), as a delta from the older sample's id;
//   - without allKeys: the count and each key's index in the table;
//   - an entry per partition: a byte of three 2-bit codes (committed, end,
//     start: the newer sample's value, -1, a varint delta from the newer
//     sample's value, or a varint absolute) and the varints.
//
// Values are relative to the newer sample, so the newest sample is
// absolute (AddRef reads it as the previous observation without decoding
// the rest) and dropping the oldest decodes nothing.

// windowShared is what a window's groups share: the clock of their
// observations' times and the table of their offset files' directories.
type windowShared struct {
	windowClock
	dirs     []string
	dirIndex map[string]uint32
}

// dirID is dir's id in the table of directories (a volume has one or two).
func (sh *windowShared) dirID(dir string) uint32 {
	if id, ok := sh.dirIndex[dir]; ok {
		return id
	}
	if sh.dirIndex == nil {
		sh.dirIndex = map[string]uint32{}
	}
	id := uint32(len(sh.dirs))
	sh.dirs = append(sh.dirs, dir)
	sh.dirIndex[dir] = id
	return id
}

// windowClock interns the times of a window's observations by id.
type windowClock struct {
	base  uint32 // id of times[0]
	times []time.Time
	refs  []int32
}

// add returns t's id (counting one more use): an identical time (wall,
// monotonic reading and location, so a time decodes exactly as given)
// among the last few added, else a new one.
func (c *windowClock) add(t time.Time) uint32 {
	for i := len(c.times) - 1; i >= 0 && i >= len(c.times)-4; i-- {
		if c.times[i] == t { //nolint: identity, not the instant
			c.refs[i]++
			return c.base + uint32(i)
		}
	}
	c.times = append(c.times, t)
	c.refs = append(c.refs, 1)
	return c.base + uint32(len(c.times)-1)
}

func (c *windowClock) at(id uint32) time.Time { return c.times[id-c.base] }

// release drops one use of id; times no sample uses are forgotten from
// the oldest on.
func (c *windowClock) release(id uint32) {
	c.refs[id-c.base]--
	k := 0
	for k < len(c.refs) && c.refs[k] == 0 {
		k++
	}
	if k > 0 {
		c.times = slices.Delete(c.times, 0, k)
		c.refs = slices.Delete(c.refs, 0, k)
		c.base += uint32(k)
	}
}

// Header bits of an encoded sample.
const (
	hdrAllKeys  = 1 << 0
	hdrRare     = 1 << 1
	hdrFollowed = 1 << 2
	hdrRewrite  = 3 // 2 bits
	hdrModTime  = 5 // 2 bits
	hdrSame     = 1 << 7

	modZero    = 0 // no modification time
	modNewer   = 1 // the newer sample's
	modDelta   = 2 // a varint back from the sample's time
	modOutside = 3 // exact, in the rare record
)

// Codes of an entry's values.
const (
	valNewer    = 0 // the newer sample's value
	valMinusOne = 1 // -1 (none, unknown)
	valDelta    = 2 // the newer sample's value plus a zigzag varint
	valAbsolute = 3 // a zigzag varint
)

// rareSample is what a sample holds seldom, kept out of the stream.
type rareSample struct {
	seq             uint32
	err             string
	unobservedFirst string
	unobserved      int32
	fileAnoms       []OffsetAnomaly
	blockers        []SampleBlocker
	// pair are the anomalies AddRef found between the previous sample and
	// this one.
	pair    []OffsetAnomaly
	modTime time.Time
	// outside: modTime is the sample's (modOutside), not left unset.
	outside bool
}

// sampleStore is one group's samples (see above).
type sampleStore struct {
	keys []string
	enc  []byte
	// n samples; the newest is encoded at lastOff, and has time id
	// lastID, the oldest firstID; seq0 numbers the oldest (rare records
	// are found by number).
	n               int32
	lastOff         int32
	firstID, lastID uint32
	seq0            uint32
	rare            []rareSample
	// file is the newest sample's offset file reading (nil: none), as
	// encodeReading writes it; fileRare what it holds seldom.
	file     []byte
	fileRare *readingRare
}

// keyVal is a key's values in the sample decoded last.
type keyVal struct{ c, e, s int64 }

// windowView is a window decoded: a worker's scratch, reused from group
// to group.
type windowView struct {
	samples []HealthSample
	pairs   [][]OffsetAnomaly
	parts   []PartitionSample
	offs    []int32
	ids     []uint32
	counts  []int32
	vals    []keyVal
	idx     []int32
	newer   newerVals
	buf     []byte
}

// viewPool holds the evaluations' scratch views (one a core in use).
var viewPool = sync.Pool{New: func() any { return new(windowView) }}

func zigzag(d int64) uint64   { return uint64(d<<1) ^ uint64(d>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uvarint reads a varint at b[*at] (the stream is written by this file
// only; a short read is a bug, and panics as an index out of range).
func uvarint(b []byte, at *int) uint64 {
	v, k := binary.Uvarint(b[*at:])
	if k <= 0 {
		panic("inspect: corrupt health window stream")
	}
	*at += k
	return v
}

// newerVals are the newer sample's values by key index, for encoding
// (its last occurrence of a key wins, as in decoding).
type newerVals struct {
	vals []PartitionSample
	has  []bool
}

// encodeValue appends v's code bits at shift into flags and its varint.
func encodeValue(buf []byte, flags *byte, shift uint, v int64, nv int64, has bool) []byte {
	switch {
	case v == -1:
		*flags |= valMinusOne << shift
	case has && nv != -1 && v == nv:
		*flags |= valNewer << shift
	case has && nv != -1:
		*flags |= valDelta << shift
		buf = binary.AppendUvarint(buf, zigzag(int64(uint64(v)-uint64(nv))))
	default:
		*flags |= valAbsolute << shift
		buf = binary.AppendUvarint(buf, zigzag(v))
	}
	return buf
}

func decodeValue(b []byte, at *int, code byte, nv int64) int64 {
	switch code {
	case valNewer:
		return nv
	case valMinusOne:
		return -1
	case valDelta:
		return int64(uint64(nv) + uint64(unzigzag(uvarint(b, at))))
	default:
		return unzigzag(uvarint(b, at))
	}
}

// predictEnd is what a log end is read relative to: the newer sample's
// moved as far as the committed offset moved (a group keeping up moves
// both alike, so a steady lag costs no byte); the newer sample's when
// either committed offset is unknown. An end of -1 is its own code.
func predictEnd(newerEnd, newerCommitted, committed int64) int64 {
	if newerEnd == -1 || newerCommitted == -1 || committed == -1 {
		return newerEnd
	}
	return int64(uint64(newerEnd) + uint64(committed) - uint64(newerCommitted))
}

// modCode is how sample s's modification time is kept, newer being the
// newer sample's (nil: none).
func modCode(s *HealthSample, newer *HealthSample) byte {
	m := s.FileModTime
	switch {
	case newer != nil && m == newer.FileModTime: //nolint: identity
		return modNewer
	case m == time.Time{}:
		return modZero
	case modFromDelta(s.Time, s.Time.UnixNano()-m.UnixNano()) == m:
		return modDelta
	}
	return modOutside
}

func modFromDelta(t time.Time, d int64) time.Time {
	return time.Unix(0, t.UnixNano()-d).In(t.Location())
}

// indexOf is key k's index in the table (-1: none).
func (st *sampleStore) indexOf(k string) int32 {
	i, ok := slices.BinarySearch(st.keys, k)
	if !ok {
		return -1
	}
	return int32(i)
}

// hasKeys reports whether every key of s is in the table.
func (st *sampleStore) hasKeys(s *HealthSample) bool {
	for i := range s.Partitions {
		if st.indexOf(s.Partitions[i].Key) < 0 {
			return false
		}
	}
	return true
}

// allKeys reports whether s's keys are the table, in order.
func (st *sampleStore) allKeys(s *HealthSample) bool {
	if len(s.Partitions) != len(st.keys) {
		return false
	}
	for i := range s.Partitions {
		if s.Partitions[i].Key != st.keys[i] {
			return false
		}
	}
	return true
}

// isRare reports whether s (with pair, AddRef's anomalies) needs a rare
// record, given its modification time's code.
func isRare(s *HealthSample, pair []OffsetAnomaly, mod byte) bool {
	return s.Err != "" || s.Unobserved != 0 || s.UnobservedFirst != "" || len(s.FileAnomalies) > 0 || len(s.Blockers) > 0 || len(pair) > 0 || mod == modOutside
}

// encode appends sample s (time id delta tid; AddRef's rewrite kind in
// s) relative to the newer sample and its values by key nv (nil:
// absolute), with mod its modification time's code and rare whether it
// has a rare record. A sample whose partitions are the newer one's, key
// for key and value for value (a group that did not move), is its header
// alone.
func (st *sampleStore) encode(buf []byte, s *HealthSample, tid int64, newer *HealthSample, nv *newerVals, mod byte, rare bool) []byte {
	hdr := byte(s.rewrite&3)<<hdrRewrite | mod<<hdrModTime
	same := newer != nil && samePartitions(s, newer)
	all := !same && st.allKeys(s)
	if all {
		hdr |= hdrAllKeys
	}
	if same {
		hdr |= hdrSame
	}
	if rare {
		hdr |= hdrRare
	}
	if s.FileFollowed {
		hdr |= hdrFollowed
	}
	// The body is written first, then moved behind its length.
	start := len(buf)
	buf = append(buf, hdr)
	buf = binary.AppendUvarint(buf, zigzag(tid))
	if mod == modDelta {
		buf = binary.AppendUvarint(buf, zigzag(s.Time.UnixNano()-s.FileModTime.UnixNano()))
	}
	if same {
		return prefixLength(buf, start)
	}
	if !all {
		buf = binary.AppendUvarint(buf, uint64(len(s.Partitions)))
		for i := range s.Partitions {
			buf = binary.AppendUvarint(buf, uint64(st.indexOf(s.Partitions[i].Key)))
		}
	}
	for i := range s.Partitions {
		p := &s.Partitions[i]
		var q PartitionSample
		has := false
		if nv != nil {
			k := st.indexOf(p.Key)
			q, has = nv.vals[k], nv.has[k]
		}
		at := len(buf)
		buf = append(buf, 0)
		var flags byte
		buf = encodeValue(buf, &flags, 0, p.Committed, q.Committed, has)
		buf = encodeValue(buf, &flags, 2, p.End, predictEnd(q.End, q.Committed, p.Committed), has)
		buf = encodeValue(buf, &flags, 4, p.Start, q.Start, has)
		buf[at] = flags
	}
	return prefixLength(buf, start)
}

// samePartitions reports whether s's partitions are newer's, key for key
// and value for value.
func samePartitions(s, newer *HealthSample) bool {
	return slices.Equal(s.Partitions, newer.Partitions)
}

// prefixLength puts the length of buf[start:] before it, as a varint.
func prefixLength(buf []byte, start int) []byte {
	var l [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(l[:], uint64(len(buf)-start))
	buf = append(buf, l[:k]...)
	copy(buf[start+k:], buf[start:len(buf)-k])
	copy(buf[start:], l[:k])
	return buf
}

// newerOf sets nv to s's values by key index.
func (st *sampleStore) newerOf(s *HealthSample, nv *newerVals) *newerVals {
	nv.vals = slices.Grow(nv.vals[:0], len(st.keys))[:len(st.keys)]
	nv.has = slices.Grow(nv.has[:0], len(st.keys))[:len(st.keys)]
	clear(nv.has)
	for i := range s.Partitions {
		k := st.indexOf(s.Partitions[i].Key)
		nv.vals[k], nv.has[k] = s.Partitions[i], true
	}
	return nv
}

// rareAt is the rare record of sample seq (nil: none).
func (st *sampleStore) rareAt(seq uint32) *rareSample {
	i, ok := slices.BinarySearchFunc(st.rare, seq, func(r rareSample, s uint32) int { return int(int64(r.seq) - int64(s)) })
	if !ok {
		return nil
	}
	return &st.rare[i]
}

// sampleHead is an encoded sample's framing, read without its entries.
type sampleHead struct {
	end   int // where the next sample starts
	hdr   byte
	tid   int64
	body  int // where the modification time or keys start
	count int32
}

// head reads the framing of the sample at off.
func (st *sampleStore) head(off int) sampleHead {
	at := off
	l := uvarint(st.enc, &at)
	h := sampleHead{end: at + int(l), hdr: st.enc[at]}
	at++
	h.tid = unzigzag(uvarint(st.enc, &at))
	h.body = at
	if h.hdr&hdrSame != 0 {
		h.count = -1 // the newer sample's (frame resolves it)
		return h
	}
	if h.hdr&hdrAllKeys != 0 {
		h.count = int32(len(st.keys))
		return h
	}
	if (h.hdr>>hdrModTime)&3 == modDelta {
		uvarint(st.enc, &at)
	}
	h.count = int32(uvarint(st.enc, &at))
	return h
}

// decodeSample fills s (its Partitions given, of len h.count) from the
// sample at the head h, relative to the newer sample (its values in vals)
// and notes its own values in vals; i is its index in the window.
func (st *sampleStore) decodeSample(s *HealthSample, h sampleHead, newer *HealthSample, v *windowView, i int32, clock *windowShared, id uint32) {
	at := h.body
	mod := (h.hdr >> hdrModTime) & 3
	*s = HealthSample{Time: clock.at(id), Partitions: s.Partitions, FileFollowed: h.hdr&hdrFollowed != 0, rewrite: int8((h.hdr >> hdrRewrite) & 3)}
	var modDeltaNs int64
	if mod == modDelta {
		modDeltaNs = unzigzag(uvarint(st.enc, &at))
	}
	if h.hdr&hdrSame != 0 {
		copy(s.Partitions, newer.Partitions) // vals hold them already
	} else {
		st.decodeEntries(s, at, h, v)
	}
	switch mod {
	case modNewer:
		s.FileModTime = newer.FileModTime
	case modDelta:
		s.FileModTime = modFromDelta(s.Time, modDeltaNs)
	}
	if h.hdr&hdrRare != 0 {
		if r := st.rareAt(st.seq0 + uint32(i)); r != nil {
			s.Err, s.Unobserved, s.UnobservedFirst, s.FileAnomalies, s.Blockers = r.err, r.unobserved, r.unobservedFirst, r.fileAnoms, r.blockers
			if mod == modOutside {
				s.FileModTime = r.modTime
			}
		}
	}
}

// decodeEntries decodes the keys and values of the sample whose head is
// h, from at (past its modification time), relative to the newer values
// in v.vals, and notes its own there.
func (st *sampleStore) decodeEntries(s *HealthSample, at int, h sampleHead, v *windowView) {
	v.idx = slices.Grow(v.idx[:0], len(s.Partitions))[:len(s.Partitions)]
	if h.hdr&hdrAllKeys == 0 {
		uvarint(st.enc, &at) // the count, in h
		for j := range s.Partitions {
			v.idx[j] = int32(uvarint(st.enc, &at))
		}
	} else {
		for j := range s.Partitions {
			v.idx[j] = int32(j)
		}
	}
	for j := range s.Partitions {
		p := &s.Partitions[j]
		k := v.idx[j]
		flags := st.enc[at]
		at++
		nv := v.vals[k]
		p.Key = st.keys[k]
		p.Committed = decodeValue(st.enc, &at, flags&3, nv.c)
		p.End = decodeValue(st.enc, &at, (flags>>2)&3, predictEnd(nv.e, nv.c, p.Committed))
		p.Start = decodeValue(st.enc, &at, (flags>>4)&3, nv.s)
	}
	for j := range s.Partitions {
		p := &s.Partitions[j]
		v.vals[v.idx[j]] = keyVal{c: p.Committed, e: p.End, s: p.Start}
	}
}

// frame reads every sample's framing into v (offs, ids, counts) and
// sizes v for the window.
func (st *sampleStore) frame(v *windowView) {
	n := int(st.n)
	v.offs, v.ids, v.counts = v.offs[:0], v.ids[:0], v.counts[:0]
	off, id := 0, st.firstID
	total := 0
	for i := range n {
		h := st.head(off)
		if i > 0 {
			id = uint32(int64(id) + h.tid)
		}
		v.offs, v.ids, v.counts = append(v.offs, int32(off)), append(v.ids, id), append(v.counts, h.count)
		off = h.end
	}
	for i := n - 1; i >= 0; i-- {
		if v.counts[i] < 0 {
			v.counts[i] = v.counts[i+1] // the newest is never the same as a newer one
		}
		total += int(v.counts[i])
	}
	v.parts = slices.Grow(v.parts[:0], total)[:total]
	v.samples = slices.Grow(v.samples[:0], n)[:n]
	v.pairs = slices.Grow(v.pairs[:0], n)[:n]
	v.vals = slices.Grow(v.vals[:0], len(st.keys))[:len(st.keys)]
}

// decode decodes the window into v: v.samples (the last with the file
// reading) and v.pairs, the anomalies between each sample and the one
// before (for the first, what a follower saw up to it).
func (st *sampleStore) decode(v *windowView, group string, clock *windowShared) {
	st.frame(v)
	n := int(st.n)
	end := len(v.parts)
	for i := n - 1; i >= 0; i-- {
		c := int(v.counts[i])
		s := &v.samples[i]
		s.Partitions = v.parts[end-c : end : end]
		end -= c
		var newer *HealthSample
		if i+1 < n {
			newer = &v.samples[i+1]
		}
		st.decodeSample(s, st.head(int(v.offs[i])), newer, v, int32(i), clock, v.ids[i])
		v.pairs[i] = nil
		if r := st.rareAt(st.seq0 + uint32(i)); r != nil && i > 0 {
			v.pairs[i] = r.pair
		}
	}
	if n > 0 {
		v.samples[n-1].File = st.reading(group, clock)
		if v.samples[0].FileFollowed {
			v.pairs[0] = v.samples[0].FileAnomalies
		}
	}
}

// last decodes the newest sample alone into s (its partitions in v's
// scratch), with its file reading.
func (st *sampleStore) last(v *windowView, group string, clock *windowShared) *HealthSample {
	h := st.head(int(st.lastOff))
	v.parts = slices.Grow(v.parts[:0], int(h.count))[:h.count]
	v.vals = slices.Grow(v.vals[:0], len(st.keys))[:len(st.keys)]
	if cap(v.samples) == 0 {
		v.samples = make([]HealthSample, 1)
	}
	s := &v.samples[:1][0]
	s.Partitions = v.parts
	st.decodeSample(s, h, nil, v, st.n-1, clock, st.lastID)
	s.File = st.reading(group, clock)
	return s
}

// push appends s (prev: the newest sample before it, decoded; nil for
// the first) with pair, the anomalies AddRef found between them.
func (st *sampleStore) push(s HealthSample, group string, prev *HealthSample, pair []OffsetAnomaly, clock *windowShared, v *windowView) {
	if !st.hasKeys(&s) || prev == nil {
		st.rebuildWith(s, group, pair, clock, v)
		return
	}
	id := clock.add(s.Time)
	seq := st.seq0 + uint32(st.n)
	// The newest sample so far is written again relative to s, then s, in
	// the scratch first: the stream grows by what they take.
	ph := st.head(int(st.lastOff))
	pmod := (ph.hdr >> hdrModTime) & 3
	if prev.FileModTime == s.FileModTime && pmod != modZero { //nolint: identity
		pmod = modNewer
	}
	v.buf = st.encode(v.buf[:0], prev, ph.tid, &s, st.newerOf(&s, &v.newer), pmod, ph.hdr&hdrRare != 0)
	at := len(v.buf)
	mod := modCode(&s, nil)
	rare := isRare(&s, pair, mod)
	v.buf = st.encode(v.buf, &s, int64(id)-int64(st.lastID), nil, nil, mod, rare)
	st.enc = append(roomFor(st.enc[:st.lastOff], len(v.buf)), v.buf...)
	st.lastOff += int32(at)
	st.dropOlderBlockers()
	if rare {
		st.rare = append(st.rare, rareOf(seq, &s, pair, mod))
	}
	st.n++
	st.lastID = id
	st.encodeReading(s.File, group, clock)
}

// roomFor makes room for n more bytes in b, growing it by an eighth
// beyond them rather than doubling it: a window's stream stays about one
// size (the oldest sample goes as the newest comes), so a doubled array
// would stay half empty for good.
func roomFor(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	grown := make([]byte, len(b), len(b)+n+(len(b)+n)/8)
	copy(grown, b)
	return grown
}

// dropOlderBlockers forgets the blockers of the samples kept so far, as a
// newer sample comes: the health rules read the newest sample's blockers
// alone (BLOCKED is what the last observation holds, its Since the
// blocker's own), and a partition stuck for the whole window would
// otherwise carry its blocker, detail and fix in every sample (at 100,000
// stopped groups, 20 copies of 200,000 blockers: 1.5 GB).
// A record left with nothing else is dropped (decoding finds none and
// reads nothing rare): most samples of such a group are rare only by
// their blockers.
func (st *sampleStore) dropOlderBlockers() {
	st.rare = slices.DeleteFunc(st.rare, func(r rareSample) bool {
		r.blockers = nil
		return r.empty()
	})
	for i := range st.rare {
		st.rare[i].blockers = nil
	}
}

// empty reports whether r holds nothing but its sequence number.
func (r *rareSample) empty() bool {
	return r.err == "" && r.unobserved == 0 && r.unobservedFirst == "" && len(r.fileAnoms) == 0 && len(r.blockers) == 0 && len(r.pair) == 0 && !r.outside
}

// rareOf is s's rare record; mod is its modification time's code (the
// time is kept only when the stream cannot say it: modOutside).
func rareOf(seq uint32, s *HealthSample, pair []OffsetAnomaly, mod byte) rareSample {
	r := rareSample{seq: seq, err: s.Err, unobserved: s.Unobserved, unobservedFirst: s.UnobservedFirst, fileAnoms: s.FileAnomalies, blockers: s.Blockers, pair: pair}
	if mod == modOutside {
		r.modTime, r.outside = s.FileModTime, true
	}
	return r
}

// rebuildWith encodes the window again with s added: its key table is
// the keys of every sample kept.
func (st *sampleStore) rebuildWith(s HealthSample, group string, pair []OffsetAnomaly, clock *windowShared, v *windowView) {
	st.decode(v, group, clock)
	n := int(st.n)
	samples := append(v.samples[:n:n], s)
	pairs := append(v.pairs[:n:n], pair)
	ids := append(v.ids[:n:n], clock.add(s.Time))
	st.encodeAll(samples, pairs, ids, group, clock, v)
}

// encodeAll replaces the store's samples with samples (oldest first; the
// last's File is kept), pairs and their time ids, numbered from seq0.
func (st *sampleStore) encodeAll(samples []HealthSample, pairs [][]OffsetAnomaly, ids []uint32, group string, clock *windowShared, v *windowView) {
	keys := st.keys[:0:0]
	for i := range samples {
		for _, p := range samples[i].Partitions {
			keys = append(keys, p.Key)
		}
	}
	slices.Sort(keys)
	st.keys = slices.Clip(slices.Compact(keys))
	enc := v.buf[:0]
	st.rare = st.rare[:0]
	for i := range samples {
		var newer *HealthSample
		var nv *newerVals
		if i+1 < len(samples) {
			newer = &samples[i+1]
			nv = st.newerOf(newer, &v.newer)
		}
		var pair []OffsetAnomaly
		if i > 0 {
			pair = pairs[i]
		}
		mod := modCode(&samples[i], newer)
		rare := isRare(&samples[i], pair, mod)
		tid := int64(0)
		if i > 0 {
			tid = int64(ids[i]) - int64(ids[i-1])
		}
		st.lastOff = int32(len(enc))
		enc = st.encode(enc, &samples[i], tid, newer, nv, mod, rare)
		st.dropOlderBlockers()
		if rare {
			st.rare = append(st.rare, rareOf(st.seq0+uint32(i), &samples[i], pair, mod))
		}
	}
	v.buf = enc
	st.enc = append(roomFor(st.enc[:0], len(enc)), enc...)
	st.n = int32(len(samples))
	st.firstID, st.lastID = ids[0], ids[len(ids)-1]
	st.encodeReading(samples[len(samples)-1].File, group, clock)
}

// firstTime is the oldest sample's time.
func (st *sampleStore) firstTime(clock *windowShared) time.Time { return clock.at(st.firstID) }

// dropFirst forgets the oldest sample (two at least are kept by the
// caller).
func (st *sampleStore) dropFirst(clock *windowShared) {
	h0 := st.head(0)
	h1 := st.head(h0.end)
	clock.release(st.firstID)
	st.firstID = uint32(int64(st.firstID) + h1.tid)
	st.enc = st.enc[:copy(st.enc, st.enc[h0.end:])]
	st.lastOff -= int32(h0.end)
	st.n--
	st.seq0++
	k := 0
	for k < len(st.rare) && st.rare[k].seq < st.seq0 {
		k++
	}
	st.rare = slices.Delete(st.rare, 0, k)
}

// trim re-encodes the window when its key table holds keys no sample
// kept has (partitions that vanished before the window), and gives back
// a stream's spare capacity.
func (st *sampleStore) trim(group string, clock *windowShared, v *windowView) {
	if h := st.head(int(st.lastOff)); h.hdr&hdrAllKeys == 0 {
		used := make([]bool, len(st.keys))
		unused := len(st.keys)
		off := 0
		for range st.n {
			h := st.head(off)
			if h.hdr&hdrAllKeys != 0 {
				unused = 0
				break
			}
			if h.hdr&hdrSame != 0 {
				off = h.end
				continue // the newer sample's keys
			}
			at := h.body
			if (h.hdr>>hdrModTime)&3 == modDelta {
				uvarint(st.enc, &at)
			}
			for range uvarint(st.enc, &at) {
				if k := uvarint(st.enc, &at); !used[k] {
					used[k] = true
					unused--
				}
			}
			off = h.end
		}
		if unused > 0 {
			st.decode(v, group, clock)
			n := int(st.n)
			st.encodeAll(v.samples[:n], v.pairs[:n], v.ids[:n], group, clock, v)
		}
	}
	if cap(st.enc) > len(st.enc)+len(st.enc)/2+64 {
		st.enc = append(make([]byte, 0, len(st.enc)+len(st.enc)/8), st.enc...)
	}
}

// release gives back the store's time ids (the group is forgotten).
func (st *sampleStore) release(clock *windowShared) {
	off, id := 0, st.firstID
	for i := range st.n {
		h := st.head(off)
		if i > 0 {
			id = uint32(int64(id) + h.tid)
		}
		clock.release(id)
		off = h.end
	}
	*st = sampleStore{}
}

// The newest sample's offset file reading, compact: a flags byte, the
// directory's id in the window's table, the count of offsets, and each
// offset's key (an index in the key table, or past it in fileRare.keys)
// and value. The file's name is the group's id with ".json" but for
// files kaas does not name so; what is seldom (another name or group, a
// problem, an odd format, an empty list that is not nil) is in fileRare.
const (
	rdMissing = 1 << 0
	rdCorrupt = 1 << 1
	rdFormat  = 2 // 2 bits: "", envelope, plain map, another (fileRare)
	rdNoPath  = 1 << 4
	rdRare    = 1 << 5
)

// readingFormats are the formats a reading's 2-bit code names.
var readingFormats = [3]string{"", volume.FormatEnvelope, volume.FormatPlainMap}

// readingRare is what a reading holds seldom.
type readingRare struct {
	group, base, format, problem string
	keys                         []string
	// named: base is the file's name; emptyList: Offsets is empty, not nil.
	named, emptyList bool
}

// encodeReading keeps r, group's newest reading, in st (its keys as
// indexes in the current key table).
func (st *sampleStore) encodeReading(r *OffsetReading, group string, sh *windowShared) {
	if r == nil {
		st.file, st.fileRare = nil, nil
		return
	}
	var rr readingRare
	flags := byte(0)
	if r.Missing {
		flags |= rdMissing
	}
	if r.Corrupt {
		flags |= rdCorrupt
	}
	code := byte(slices.Index(readingFormats[:], r.Format))
	if code > 2 {
		code, rr.format = 3, r.Format
	}
	flags |= code << rdFormat
	var dir uint32
	if r.File == "" {
		flags |= rdNoPath
	} else {
		i := strings.LastIndexByte(r.File, '/') + 1
		dir = sh.dirID(r.File[:i])
		if base := r.File[i:]; len(base) != len(group)+5 || !strings.HasPrefix(base, group) || !strings.HasSuffix(base, ".json") {
			rr.base, rr.named = base, true
		}
	}
	if r.Group != group {
		rr.group = r.Group
	}
	rr.problem = r.Problem
	rr.emptyList = r.Offsets != nil && len(r.Offsets) == 0
	b := append(st.file[:0], 0)
	b = binary.AppendUvarint(b, uint64(dir))
	b = binary.AppendUvarint(b, uint64(len(r.Offsets)))
	for _, o := range r.Offsets {
		k := st.indexOf(o.Key)
		if k < 0 {
			k = int32(len(st.keys) + len(rr.keys))
			rr.keys = append(rr.keys, o.Key)
		}
		b = binary.AppendUvarint(b, uint64(k))
		b = binary.AppendUvarint(b, zigzag(o.Offset))
	}
	st.fileRare = nil
	if rr.named || rr.group != "" || rr.format != "" || rr.problem != "" || rr.emptyList || len(rr.keys) > 0 {
		flags |= rdRare
		st.fileRare = &rr
	}
	b[0] = flags
	if cap(b) > len(b)+len(b)/2+8 {
		b = slices.Clone(b)
	}
	st.file = b
}

// reading is group's newest reading (nil: none), decoded.
func (st *sampleStore) reading(group string, sh *windowShared) *OffsetReading {
	if st.file == nil {
		return nil
	}
	b, at := st.file, 1
	flags := b[0]
	rr := st.fileRare
	if rr == nil {
		rr = &readingRare{}
	}
	r := &OffsetReading{Group: group, Missing: flags&rdMissing != 0, Corrupt: flags&rdCorrupt != 0, Problem: rr.problem}
	if rr.group != "" {
		r.Group = rr.group
	}
	if code := (flags >> rdFormat) & 3; code < 3 {
		r.Format = readingFormats[code]
	} else {
		r.Format = rr.format
	}
	dir := uvarint(b, &at)
	if flags&rdNoPath == 0 {
		if rr.named {
			r.File = sh.dirs[dir] + rr.base
		} else {
			r.File = sh.dirs[dir] + group + ".json"
		}
	}
	n := int(uvarint(b, &at))
	if n > 0 || rr.emptyList {
		r.Offsets = make([]anomaly.Offset, n)
	}
	for i := range n {
		k := int(uvarint(b, &at))
		if k < len(st.keys) {
			r.Offsets[i].Key = st.keys[k]
		} else {
			r.Offsets[i].Key = rr.keys[k-len(st.keys)]
		}
		r.Offsets[i].Offset = unzigzag(uvarint(b, &at))
	}
	return r
}
