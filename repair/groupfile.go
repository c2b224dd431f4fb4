package repair

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// GroupFile is one group's offset file as read before a write: the exact
// bytes (to detect a concurrent writer) and the parsed entries.
type GroupFile struct {
	Group string
	Path  string
	State FileState
	// File is nil when the file does not exist.
	File *volume.OffsetFile
	// Findings are the parser's remarks (plain map, negative offsets...).
	Findings []volume.Finding
	// committed indexes the entries for Committed (built on first use;
	// the last entry of a duplicated key wins, as in JSON).
	committed map[tpKey]int64
}

// GroupPathError is GroupFilePath's refusal: the group and why. Its text
// names the group; Err alone is for output that already names it.
type GroupPathError struct {
	Group string
	Err   error
}

func (e *GroupPathError) Error() string {
	return fmt.Sprintf("group %q: %v", volume.DisplayName(e.Group), e.Err)
}

func (e *GroupPathError) Unwrap() error { return e.Err }

// GroupFilePath is where kaas keeps a group's offsets: the raw group id
// plus ".json" in the live offsets dir of the volume's generation
// (DATA/__consumer_offsets on Go / Rust ≤ 0.2.15, CD/__consumer_offsets
// from 0.2.16 on). Every offsets read-for-write, reset and delete takes its
// path from here. It refuses ids kaas cannot round-trip as a file name (and
// that would escape the directory), and refuses when the live dir cannot be
// told (both dirs hold group files and no version is pinned).
func GroupFilePath(l volume.Layout, group string) (string, error) {
	if ps := volume.NameProblems(group); len(ps) > 0 {
		return "", &GroupPathError{Group: group, Err: fmt.Errorf("kaasctl does not write offsets of this group id: %s", strings.Join(ps, "; "))}
	}
	if group == "." || group == ".." || strings.ContainsRune(group, '\\') {
		return "", &GroupPathError{Group: group, Err: fmt.Errorf("kaasctl does not write offsets of this group id (not a plain file name)")}
	}
	dir, err := l.LiveOffsetsDir()
	if err != nil {
		return "", &GroupPathError{Group: group, Err: err}
	}
	return filepath.Join(dir, group+".json"), nil
}

// ReadGroupFile reads a group's offset file for a merge. A missing file is
// fine (File nil); a file kaas cannot decode is an error, since merging
// with it would lose the offsets it holds.
func ReadGroupFile(l volume.Layout, group string) (*GroupFile, error) {
	return readGroupFile(l, group, Policy{})
}

// readGroupFile is ReadGroupFile for a write under pol: a file or offsets
// dir reached through a link is refused unless pol follows links.
func readGroupFile(l volume.Layout, group string, pol Policy) (*GroupFile, error) {
	l = l.WithGeneration()
	p, err := GroupFilePath(l, group)
	if err != nil {
		return nil, err
	}
	if err := CheckWritePath(VolumeRoot(l, p), p, pol); err != nil {
		return nil, err
	}
	st, err := readState(p, pol.FollowSymlinks)
	if err != nil {
		if errors.Is(err, safefs.ErrNotRegular) || errors.Is(err, safefs.ErrSymlink) || errors.Is(err, safefs.ErrTooLarge) {
			return nil, err // names the file already
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	gf := &GroupFile{Group: group, Path: p, State: st}
	if !st.Exists {
		return gf, nil
	}
	of, fs, perr := volume.ParseOffsetFile(p, st.Data)
	fs = l.Gen.AdjustOffsetFindings(of, fs)
	if perr != nil {
		return nil, fmt.Errorf("%v; kaasctl will not merge with a file it cannot read: run 'kaasctl volume repair' (it quarantines the file and saves what it could read as a --from-file CSV)", perr)
	}
	if f := undecodable(fs); f != nil {
		return nil, fmt.Errorf("%s: %s; kaasctl will not merge with a file kaas cannot decode: run 'kaasctl volume repair' first", p, f.Message)
	}
	gf.File, gf.Findings = of, fs
	return gf, nil
}

// undecodable is the first finding that makes a file one kaas cannot
// decode (nil: none).
func undecodable(fs []volume.Finding) *volume.Finding {
	for i := range fs {
		if fs[i].Severity == volume.SevError && fs[i].Code != volume.CodeOffsetsPlainMap {
			return &fs[i]
		}
	}
	return nil
}

// WriteBlocked is why the offsets write path will not write group's file
// ("" when it will): an id kaas cannot round-trip as a file name, the
// live offsets dir not known, or a finding of its file (as read, with
// findings) that kaas cannot decode. A prune refuses such a group in its
// plan, before anything is written.
func WriteBlocked(l volume.Layout, group string, findings []volume.Finding) string {
	if _, err := GroupFilePath(l, group); err != nil {
		var gpe *GroupPathError
		if errors.As(err, &gpe) {
			err = gpe.Err
		}
		return err.Error()
	}
	if f := undecodable(findings); f != nil {
		return f.Message + "; kaasctl does not write a file kaas cannot decode: run 'kaasctl volume repair' first"
	}
	return ""
}

// Entries returns the file's entries (none when there is no file).
func (gf *GroupFile) Entries() []volume.OffsetEntry {
	if gf == nil || gf.File == nil {
		return nil
	}
	return gf.File.Entries
}

// PlainMap reports whether the file is a plain map the brokers of the
// volume's generation read as EMPTY (Rust 0.2.18; any write converts it).
// On Go / Rust ≤ 0.2.17 a plain map is offsets and not a hazard.
func (gf *GroupFile) PlainMap() bool {
	return gf != nil && gf.File != nil && gf.File.Format == volume.FormatPlainMap && gf.File.BrokerSeesEmpty
}

// Committed returns the committed offset of one partition in the file.
func (gf *GroupFile) Committed(topic string, part int32) (int64, bool) {
	if gf == nil {
		return 0, false
	}
	if gf.committed == nil {
		es := gf.Entries()
		gf.committed = make(map[tpKey]int64, len(es))
		for _, e := range es {
			if _, dup := gf.committed[tpKey{e.Topic, e.Partition}]; !dup {
				gf.committed[tpKey{e.Topic, e.Partition}] = e.Offset
			}
		}
	}
	o, ok := gf.committed[tpKey{topic, part}]
	return o, ok
}

// EncodeEnvelope renders entries as kaas's v2 envelope (compact JSON,
// "metadata" omitted when no entry has any; keys sorted).
func EncodeEnvelope(entries []volume.OffsetEntry) []byte {
	type env struct {
		Offsets  map[string]int64  `json:"offsets"`
		Metadata map[string]string `json:"metadata,omitempty"`
	}
	e := env{Offsets: make(map[string]int64, len(entries))}
	for _, x := range entries {
		k := x.Topic + "/" + strconv.Itoa(int(x.Partition))
		e.Offsets[k] = x.Offset
		if x.Metadata != "" {
			if e.Metadata == nil {
				e.Metadata = map[string]string{}
			}
			e.Metadata[k] = x.Metadata
		}
	}
	data, err := json.Marshal(e)
	if err != nil { // maps of strings and ints always marshal
		panic(err)
	}
	return data
}

type tpKey struct {
	topic string
	part  int32
}

// MergeEntries returns the full set to write: every entry of the file, with
// the changed partitions replaced (and new ones added), metadata kept.
// Rows with an Error are skipped. drop removes partitions instead.
func MergeEntries(file []volume.OffsetEntry, set []PlanRow, drop map[tpKey]bool) []volume.OffsetEntry {
	out := make([]volume.OffsetEntry, 0, len(file)+len(set))
	idx := map[tpKey]int{}
	for _, e := range file {
		k := tpKey{e.Topic, e.Partition}
		if drop[k] {
			continue
		}
		if i, ok := idx[k]; ok { // duplicate key in a hand-edited file: last wins, as in JSON
			out[i] = e
			continue
		}
		idx[k] = len(out)
		out = append(out, e)
	}
	for _, r := range set {
		if r.Error != "" {
			continue
		}
		k := tpKey{r.Topic, r.Partition}
		if i, ok := idx[k]; ok {
			out[i].Offset = r.New
			continue
		}
		idx[k] = len(out)
		out = append(out, volume.OffsetEntry{Topic: r.Topic, Partition: r.Partition, Offset: r.New})
	}
	slices.SortFunc(out, func(a, b volume.OffsetEntry) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// Verification is the comparison of the intended full set with the file
// as re-read after the write.
type Verification struct {
	// Mismatch lists partitions whose offset in the file is not the
	// intended one ("orders/0: file has 12, want 40" or "missing").
	Mismatch map[tpKey]string
	// Extra lists partitions present in the file but not intended (a
	// broker's stale cache bringing keys back).
	Extra []string
	Err   error
}

// OK reports whether the file holds exactly the intended set.
func (v Verification) OK() bool { return v.Err == nil && len(v.Mismatch) == 0 && len(v.Extra) == 0 }

// MismatchOf says why one partition did not verify ("" when it did).
func (v Verification) MismatchOf(topic string, part int32) string {
	if v.Err != nil {
		return v.Err.Error()
	}
	return v.Mismatch[tpKey{topic, part}]
}

// VerifyFile re-reads path and compares it with want.
func VerifyFile(path string, want []volume.OffsetEntry) Verification {
	return verifyFile(path, want, false)
}

// verifyFile is VerifyFile; follow reads through a link (--follow-symlinks).
func verifyFile(path string, want []volume.OffsetEntry, follow bool) Verification {
	v := Verification{Mismatch: map[tpKey]string{}}
	if follow {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	}
	of, fs, err := volume.ReadOffsetFile(path)
	if err != nil {
		v.Err = fmt.Errorf("re-reading the file: %w", err)
		return v
	}
	if of.Format != volume.FormatEnvelope {
		v.Err = errors.New("the file is not in kaas's v2 envelope after the write")
		return v
	}
	for _, f := range fs {
		if f.Severity == volume.SevError {
			v.Err = fmt.Errorf("the file does not decode after the write: %s", f.Message)
			return v
		}
	}
	got := map[tpKey]int64{}
	for _, e := range of.Entries {
		got[tpKey{e.Topic, e.Partition}] = e.Offset
	}
	wantSet := map[tpKey]bool{}
	for _, e := range want {
		k := tpKey{e.Topic, e.Partition}
		wantSet[k] = true
		o, ok := got[k]
		switch {
		case !ok:
			v.Mismatch[k] = "missing from the file"
		case o != e.Offset:
			v.Mismatch[k] = fmt.Sprintf("the file has %d, want %d", o, e.Offset)
		}
	}
	for _, e := range of.Entries {
		if !wantSet[tpKey{e.Topic, e.Partition}] {
			v.Extra = append(v.Extra, fmt.Sprintf("%s/%d", e.Topic, e.Partition))
		}
	}
	return v
}
