package volume

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Offset file formats, as kaasctl classifies them.
const (
	// FormatEnvelope is the v2 envelope {"offsets":{...},"metadata":{...}}
	// that current brokers read and write.
	FormatEnvelope = "envelope"
	// FormatPlainMap is the legacy v1 plain map {"orders/0":12}. kaas
	// v0.2.18 still writes it after OffsetDelete but reads it as EMPTY.
	FormatPlainMap = "plainMap"
)

// MaxGroupNameBytes is the longest group id whose offset file kaas can write:
// "<id>.json.tmp" must fit in NAME_MAX (255 bytes).
const MaxGroupNameBytes = 246

// OffsetEntry is one committed offset of a group.
type OffsetEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the committed offset: the next offset the group will read.
	Offset   int64  `json:"offset"`
	Metadata string `json:"metadata"`
}

// OffsetFile is one parsed <group>.json.
type OffsetFile struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Entries are sorted by topic, then partition.
	Entries []OffsetEntry `json:"entries"`
	// BrokerSeesEmpty is true when a current broker would load this file as
	// holding no offsets at all although it does (the plain-map hazard).
	BrokerSeesEmpty bool `json:"brokerSeesEmpty"`
}

// Finding codes for offset files.
const (
	CodeOffsetsPlainMap     = "offsets.legacyPlainMap"
	CodeOffsetsCorrupt      = "offsets.corruptFile"
	CodeOffsetsBadKey       = "offsets.badKey"
	CodeOffsetsBadValue     = "offsets.badValue"
	CodeOffsetsUnknownField = "offsets.unknownFields"
	CodeOffsetsOrphanMeta   = "offsets.metadataWithoutOffset"
	CodeOffsetsNegative     = "offsets.negativeOffset"
	CodeOffsetsEmpty        = "offsets.noOffsets"
	// A plain map on a generation that reads it as offsets (info only).
	CodePlainMapOffsets = "offsets.plainMap"
	// A plain map on a volume whose generation is undetermined.
	CodePlainMapUndetermined = "offsets.plainMapGenerationUnknown"
)

const (
	fixPlainMap = "run 'kaasctl volume repair' to convert it to the current envelope before any broker loads the group (a restart or rebalance); until then, do not restart the group's coordinator"
	fixCorrupt  = "kaas ignores this file without a log line and the next commit overwrites it with only the newly committed partitions: note the offsets you need, then run 'kaasctl volume repair' to quarantine it"
)

// AdjustOffsetFindings states the plain-map finding of a parsed file for
// the volume's generation: an error on Rust 0.2.18 (its brokers read the
// file as EMPTY), a note on Go / Rust ≤ 0.2.17 (their brokers read it as
// offsets; the Go OffsetDelete writes it), and a warning that says both
// when the generation is undetermined. It sets of.BrokerSeesEmpty only when
// the generation makes it a fact.
func (gi GenerationInfo) AdjustOffsetFindings(of *OffsetFile, fs []Finding) []Finding {
	if of == nil || of.Format != FormatPlainMap {
		return fs
	}
	isOffsets, known := gi.PlainMapVerdict()
	of.BrokerSeesEmpty = known && !isOffsets && len(of.Entries) > 0
	n := len(of.Entries)
	for i := range fs {
		f := &fs[i]
		if f.Code != CodeOffsetsPlainMap {
			continue
		}
		switch {
		case known && !isOffsets:
			f.Message = fmt.Sprintf("plain-map file with %d committed offsets: Rust 0.2.18 brokers read it as EMPTY, so the group restarts from auto.offset.reset the next time a broker loads it (OffsetDelete writes this format) (%s)", n, gi.Assumes())
			f.Fix = fixPlainMap + " (" + gi.Assumes() + ")"
		case known:
			f.Severity, f.Code = SevInfo, CodePlainMapOffsets
			f.Message = fmt.Sprintf("plain-map file with %d committed offsets: %s brokers read it as offsets (the Go broker's OffsetDelete writes this format); nothing to do (%s)", n, gi.Label, gi.Assumes())
			f.Fix = ""
		default:
			f.Severity, f.Code = SevWarning, CodePlainMapUndetermined
			f.Message = fmt.Sprintf("plain-map file with %d committed offsets: Go / Rust ≤ 0.2.17 brokers read it as offsets, Rust 0.2.18 brokers read it as EMPTY; the kaas generation is undetermined (%s)", n, gi.Evidence)
			f.Fix = "pin the kaas version (--kaas-version, KAASCTL_KAAS_VERSION or the profile's kaasVersion); on 0.2.18, 'kaasctl volume repair --kaas-version 0.2.18 --execute' converts it to the envelope every generation reads"
		}
	}
	return fs
}

// ReadOffsetFile reads and parses one offset file.
func ReadOffsetFile(path string) (*OffsetFile, []Finding, error) {
	data, err := readFileLimited(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &FileError{Path: path, Problem: "file does not exist"}
		}
		return nil, nil, &FileError{Path: path, Problem: readProblem(err)}
	}
	return ParseOffsetFile(path, data)
}

// ParseOffsetFile parses offset-file bytes. A file kaas cannot decode at all
// is a *FileError (and kaas silently treats the group as having no offsets).
// Everything else yields the entries kaasctl could read plus findings.
func ParseOffsetFile(path string, data []byte) (*OffsetFile, []Finding, error) {
	if of, ok := fastEnvelope(path, data); ok {
		return of, nil, nil
	}
	return parseOffsetFileGeneral(path, data)
}

// parseOffsetFileGeneral is the full parser, explaining every oddity.
func parseOffsetFileGeneral(path string, data []byte) (*OffsetFile, []Finding, error) {
	top, ferr := decodeOffsetTop(path, data)
	if ferr != nil {
		return nil, nil, ferr
	}
	var fs []Finding
	add := func(sev Severity, code, msg, fix string) {
		fs = append(fs, Finding{Severity: sev, Code: code, Path: path, Message: msg, Fix: fix})
	}
	rawOffsets, hasOffsets := top["offsets"]
	rawMeta, hasMeta := top["metadata"]
	if !hasOffsets && !hasMeta && len(top) > 0 {
		of := plainMapFile(path, top, add)
		return of, fs, nil
	}
	unknownEnvelopeFields(top, add)
	var offsets map[string]json.RawMessage
	if hasOffsets {
		if offsets, ferr = decodeEnvelopeOffsets(path, rawOffsets); ferr != nil {
			return nil, nil, ferr
		}
	}
	meta := map[string]string{}
	if hasMeta {
		if ferr = decodeEnvelopeMetadata(path, rawMeta, meta, add); ferr != nil {
			return nil, nil, ferr
		}
	}
	of := &OffsetFile{Path: path, Format: FormatEnvelope}
	for _, k := range sortedKeys(offsets) {
		e, ok := offsetEntry(k, offsets[k], add)
		if !ok {
			continue
		}
		e.Metadata = meta[k]
		of.Entries = append(of.Entries, e)
	}
	for _, k := range sortedKeys(meta) {
		if _, ok := offsets[k]; !ok {
			add(SevInfo, CodeOffsetsOrphanMeta, fmt.Sprintf("metadata for %q has no committed offset beside it", k), "")
		}
	}
	if len(of.Entries) == 0 && len(offsets) == 0 {
		add(SevInfo, CodeOffsetsEmpty, "the file holds no committed offsets", "")
	}
	sortEntries(of.Entries)
	return of, fs, nil
}

// addFinding adds a finding about the file being parsed.
type addFinding = func(sev Severity, code, msg, fix string)

// decodeOffsetTop decodes the file's top-level object, member by member.
// An empty file, invalid JSON and JSON null are errors: kaas cannot decode
// them either.
func decodeOffsetTop(path string, data []byte) (map[string]json.RawMessage, *FileError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{Path: path, Problem: "file is empty (an interrupted write?); kaas ignores it and the group's offsets are lost"}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &FileError{Path: path, Problem: describeJSONError(data, err)}
	}
	if top == nil {
		return nil, &FileError{Path: path, Problem: "the file holds JSON null, not an offsets object"}
	}
	return top, nil
}

// plainMapFile reads a legacy plain map, where every key is
// "topic/partition", and adds the finding that current brokers read it as
// empty.
func plainMapFile(path string, top map[string]json.RawMessage, add addFinding) *OffsetFile {
	of := &OffsetFile{Path: path, Format: FormatPlainMap}
	for _, k := range sortedKeys(top) {
		e, ok := offsetEntry(k, top[k], add)
		if ok {
			of.Entries = append(of.Entries, e)
		}
	}
	of.BrokerSeesEmpty = len(of.Entries) > 0
	add(SevError, CodeOffsetsPlainMap,
		fmt.Sprintf("legacy plain-map file with %d committed offsets: kaas v0.2.18 brokers read it as EMPTY, so the group restarts from auto.offset.reset the next time a broker loads it (OffsetDelete writes this format)", len(of.Entries)),
		fixPlainMap)
	sortEntries(of.Entries)
	return of
}

// unknownEnvelopeFields adds the envelope's members other than offsets and
// metadata, which kaas ignores.
func unknownEnvelopeFields(top map[string]json.RawMessage, add addFinding) {
	var unknown []string
	for k := range top {
		if k != "offsets" && k != "metadata" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		add(SevWarning, CodeOffsetsUnknownField, "fields kaas ignores: "+strings.Join(quoteAll(unknown), ", "), "")
	}
}

// decodeEnvelopeOffsets decodes the offsets member into its raw values; a
// null or an object kaas cannot decode is an error (kaas treats the group
// as having no offsets).
func decodeEnvelopeOffsets(path string, raw json.RawMessage) (map[string]json.RawMessage, *FileError) {
	if isNull(raw) {
		return nil, &FileError{Path: path, Problem: `"offsets" is null; kaas cannot decode the file and treats the group as having no offsets`}
	}
	var offsets map[string]json.RawMessage
	if err := json.Unmarshal(raw, &offsets); err != nil {
		return nil, &FileError{Path: path, Problem: `"offsets": ` + describeJSONError(raw, err) + "; kaas cannot decode the file"}
	}
	return offsets, nil
}

// decodeEnvelopeMetadata decodes the metadata member into meta, its
// string values. A value that is not a string, or a null member, is an
// error finding; a member that is not an object is an error. The caller
// makes meta, so that it stays on its stack.
func decodeEnvelopeMetadata(path string, raw json.RawMessage, meta map[string]string, add addFinding) *FileError {
	if isNull(raw) {
		add(SevError, CodeOffsetsBadValue, `"metadata" is null: kaas cannot decode the file and treats the group as having no offsets`, fixCorrupt)
		return nil
	}
	var rm map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rm); err != nil {
		return &FileError{Path: path, Problem: `"metadata": ` + describeJSONError(raw, err) + "; kaas cannot decode the file"}
	}
	for k, v := range rm {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			add(SevError, CodeOffsetsBadValue, fmt.Sprintf("metadata for %q is %s, not a string: kaas cannot decode the file and treats the group as having no offsets", k, abbreviate(v)), fixCorrupt)
			continue
		}
		meta[k] = s
	}
	return nil
}

// offsetEntry decodes one "topic/partition": offset pair, reporting problems.
func offsetEntry(k string, v json.RawMessage, add addFinding) (OffsetEntry, bool) {
	topic, part, err := SplitOffsetKey(k)
	if err != nil {
		add(SevWarning, CodeOffsetsBadKey, fmt.Sprintf("key %q: %v; no consumer ever reads this entry", k, err), "")
		return OffsetEntry{}, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		add(SevError, CodeOffsetsBadValue, fmt.Sprintf("offset for %q is %s, not a 64-bit integer: kaas cannot decode the file and treats the group as having no offsets", k, abbreviate(v)), fixCorrupt)
		return OffsetEntry{}, false
	}
	if n < 0 {
		add(SevWarning, CodeOffsetsNegative, fmt.Sprintf("offset for %q is %d; consumers treat a negative committed offset as none and fall back to auto.offset.reset", k, n), "")
	}
	return OffsetEntry{Topic: topic, Partition: part, Offset: n}, true
}

// SplitOffsetKey splits "topic/partition" on the LAST '/' (topic names
// cannot contain '/', but kaas only ever joins with one).
func SplitOffsetKey(k string) (string, int32, error) {
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return "", 0, errors.New(`no "/" between topic and partition`)
	}
	topic, ps := k[:i], k[i+1:]
	if topic == "" {
		return "", 0, errors.New("empty topic name")
	}
	p, err := strconv.ParseInt(ps, 10, 32)
	if err != nil || p < 0 || (len(ps) > 1 && ps[0] == '0') || ps[0] == '+' || ps[0] == '-' {
		return "", 0, fmt.Errorf("partition %q is not a non-negative 32-bit integer", ps)
	}
	return topic, int32(p), nil
}

func sortEntries(es []OffsetEntry) {
	slices.SortFunc(es, func(a, b OffsetEntry) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// abbreviate shows a JSON value in a message, cut to a sane length.
func abbreviate(v []byte) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	if !utf8.ValidString(s) {
		s = strconv.Quote(s)
	}
	return s
}

// NameProblems lists why kaas cannot round-trip a group id as a file name:
// it must be valid UTF-8 (the wire codec rejects anything else), at most 246
// bytes, without "/" or NUL, and not "." or "..". Empty means the name is fine.
func NameProblems(group string) []string {
	var ps []string
	if !utf8.ValidString(group) {
		ps = append(ps, "not valid UTF-8 (no client can send this group id)")
	}
	if len(group) > MaxGroupNameBytes {
		ps = append(ps, fmt.Sprintf("%d bytes long: kaas cannot write <id>.json.tmp (NAME_MAX 255), so commits are lost while clients see success", len(group)))
	}
	if strings.ContainsRune(group, '/') {
		ps = append(ps, `contains "/": kaas writes it into a sub-directory it never creates, so commits are lost while clients see success`)
	}
	if strings.ContainsRune(group, 0) {
		ps = append(ps, "contains NUL")
	}
	if group == "" {
		ps = append(ps, `empty group id (file ".json")`)
	}
	return ps
}

// DisplayName makes a group id safe to print on a terminal: invalid UTF-8
// and control characters are escaped Go-style; anything else is unchanged.
func DisplayName(s string) string {
	ok := utf8.ValidString(s)
	if ok {
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				ok = false
				break
			}
		}
	}
	if ok {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
