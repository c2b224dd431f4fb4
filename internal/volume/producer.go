package volume

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Finding codes for the transaction plumbing.
const (
	CodeFenceCorrupt      = "fences.corruptFile"
	CodeFenceBadEntry     = "fences.badEntry"
	CodeFenceBadName      = "fences.badFileName"
	CodeMarkerPending     = "markers.pending"
	CodeMarkerCorrupt     = "markers.corruptFile"
	CodeMarkerNameContent = "markers.nameMismatch"
	CodeMarkerBadName     = "markers.badFileName"
	CodePIDCorrupt        = "producerIds.corruptFile"
	CodePIDBadValue       = "producerIds.badValue"
	CodePIDBadName        = "producerIds.badFileName"
)

// FenceEntry is one producer fence: the highest epoch seen for a producer id.
type FenceEntry struct {
	PID   int64 `json:"pid"`
	Epoch int16 `json:"epoch"`
}

// FenceFile is CD/producer_fences/from-<broker>.json.
type FenceFile struct {
	Path    string       `json:"path"`
	Broker  string       `json:"broker"`
	Entries []FenceEntry `json:"entries"`
}

// ParseFenceFile parses a fence log: {"<pid>": epoch}.
func ParseFenceFile(path, broker string, data []byte) (*FenceFile, []Finding, error) {
	ff := &FenceFile{Path: path, Broker: broker}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FileError{Path: path, Problem: "file is empty; peers log a warning every 2 s and keep retrying, so no fence from this broker applies"}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err) + "; peers cannot apply fences from this broker (zombie producers are not fenced)"}
	}
	if top == nil {
		return nil, nil, &FileError{Path: path, Problem: "the file holds JSON null, not a fence map"}
	}
	var fs []Finding
	for _, k := range sortedKeys(top) {
		pid, err := strconv.ParseInt(k, 10, 64)
		ep, err2 := strconv.ParseInt(string(bytes.TrimSpace(top[k])), 10, 64)
		switch {
		case err != nil:
			fs = append(fs, Finding{Severity: SevError, Code: CodeFenceBadEntry, Path: path, Message: fmt.Sprintf("key %q is not a producer id (a 64-bit integer): peers cannot decode this file", DisplayName(k)), Fix: "move the file aside; the broker rewrites it on the next transactional InitProducerId"})
		case err2 != nil || ep < math.MinInt16 || ep > math.MaxInt16:
			fs = append(fs, Finding{Severity: SevError, Code: CodeFenceBadEntry, Path: path, Message: fmt.Sprintf("producer %d has epoch %s, not a 16-bit integer: peers cannot decode this file", pid, abbreviate(top[k])), Fix: "move the file aside; the broker rewrites it on the next transactional InitProducerId"})
		default:
			ff.Entries = append(ff.Entries, FenceEntry{PID: pid, Epoch: int16(ep)})
		}
	}
	slices.SortFunc(ff.Entries, func(a, b FenceEntry) int {
		switch {
		case a.PID < b.PID:
			return -1
		case a.PID > b.PID:
			return 1
		}
		return 0
	})
	return ff, fs, nil
}

// Marker is one pending transaction marker in CD/marker_queue/to-<broker>/.
type Marker struct {
	Path             string               `json:"path"`
	Target           string               `json:"target"`
	TransactionalID  string               `json:"transactionalId"`
	ProducerID       int64                `json:"producerId"`
	ProducerEpoch    int16                `json:"producerEpoch"`
	Commit           bool                 `json:"commit"`
	CoordinatorEpoch int32                `json:"coordinatorEpoch"`
	Partitions       []TxnTopicPartitions `json:"partitions"`
	ModTime          time.Time            `json:"modTime"`
}

// ParseMarker parses one marker file. name is its file name (<pid>-<epoch>.json).
func ParseMarker(path, target, name string, data []byte) (*Marker, []Finding, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FileError{Path: path, Problem: "marker file is empty; the target broker cannot apply it"}
	}
	var m Marker
	var raw struct {
		TransactionalID  string               `json:"transactionalId"`
		ProducerID       *int64               `json:"producerId"`
		ProducerEpoch    *int64               `json:"producerEpoch"`
		Commit           *bool                `json:"commit"`
		CoordinatorEpoch int64                `json:"coordinatorEpoch"`
		Partitions       []TxnTopicPartitions `json:"partitions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err) + "; the target broker cannot apply this marker"}
	}
	var miss []string
	if raw.ProducerID == nil {
		miss = append(miss, "producerId")
	}
	if raw.ProducerEpoch == nil {
		miss = append(miss, "producerEpoch")
	}
	if raw.Commit == nil {
		miss = append(miss, "commit")
	}
	if len(miss) > 0 {
		return nil, nil, &FileError{Path: path, Problem: "missing " + strings.Join(miss, ", ") + "; the target broker cannot apply this marker"}
	}
	if *raw.ProducerEpoch < math.MinInt16 || *raw.ProducerEpoch > math.MaxInt16 || raw.CoordinatorEpoch < math.MinInt32 || raw.CoordinatorEpoch > math.MaxInt32 {
		return nil, nil, &FileError{Path: path, Problem: "producerEpoch or coordinatorEpoch out of range; the target broker cannot apply this marker"}
	}
	m = Marker{Path: path, Target: target, TransactionalID: raw.TransactionalID, ProducerID: *raw.ProducerID, ProducerEpoch: int16(*raw.ProducerEpoch),
		Commit: *raw.Commit, CoordinatorEpoch: int32(raw.CoordinatorEpoch), Partitions: raw.Partitions}
	var fs []Finding
	if pid, ep, ok := parseMarkerName(name); !ok {
		fs = append(fs, Finding{Severity: SevWarning, Code: CodeMarkerBadName, Path: path, Message: "marker file name is not <producerId>-<epoch>.json", Fix: ""})
	} else if pid != m.ProducerID || ep != int64(m.ProducerEpoch) {
		fs = append(fs, Finding{Severity: SevWarning, Code: CodeMarkerNameContent, Path: path,
			Message: fmt.Sprintf("file name says producer %d epoch %d, the content says producer %d epoch %d", pid, ep, m.ProducerID, m.ProducerEpoch)})
	}
	return &m, fs, nil
}

func parseMarkerName(name string) (int64, int64, bool) {
	s, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return 0, 0, false
	}
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return 0, 0, false
	}
	pid, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	ep, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return pid, ep, true
}

// ProducerIDFile is CD/producer_ids/kaas-<N>.json: broker N's PID block.
type ProducerIDFile struct {
	Path      string `json:"path"`
	Broker    string `json:"broker"`
	NextBlock int64  `json:"nextBlock"`
}

// PIDBlockSize is how many producer ids a broker reserves at once.
const PIDBlockSize = 1000

// ParseProducerIDFile parses {"nextBlock":N}.
func ParseProducerIDFile(path, broker string, data []byte) (*ProducerIDFile, []Finding, error) {
	const why = "; the broker's producer-id allocator refuses to start and it falls back to an in-memory counter (producer ids can repeat after a restart)"
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FileError{Path: path, Problem: "file is empty" + why}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err) + why}
	}
	v, ok := raw["nextBlock"]
	if !ok || isNull(v) {
		return nil, nil, &FileError{Path: path, Problem: `"nextBlock" is missing` + why}
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return nil, nil, &FileError{Path: path, Problem: fmt.Sprintf(`"nextBlock" is %s, not a 64-bit integer%s`, abbreviate(v), why)}
	}
	pf := &ProducerIDFile{Path: path, Broker: broker, NextBlock: n}
	var fs []Finding
	if n < 0 {
		fs = append(fs, Finding{Severity: SevError, Code: CodePIDBadValue, Path: path, Message: fmt.Sprintf("nextBlock is negative (%d): producer ids would collide with another broker's range", n),
			Fix: "stop the broker and set nextBlock to a multiple of 1000 above every producer id it has handed out"})
	} else if n%PIDBlockSize != 0 {
		fs = append(fs, Finding{Severity: SevWarning, Code: CodePIDBadValue, Path: path, Message: fmt.Sprintf("nextBlock %d is not a multiple of %d (kaas reserves whole blocks): edited by hand?", n, PIDBlockSize)})
	}
	return pf, fs, nil
}

// Plumbing is everything under producer_fences, marker_queue and producer_ids.
type Plumbing struct {
	Fences      []*FenceFile      `json:"fences"`
	Markers     []*Marker         `json:"markers"`
	ProducerIDs []*ProducerIDFile `json:"producerIds"`
}

// MarkerStaleAge is how long a marker may wait before kaasctl warns: the
// target broker polls its inbox every 2 s.
const MarkerStaleAge = time.Minute

// ReadPlumbing reads the fence logs, marker queue and producer-id files.
func ReadPlumbing(l Layout, now time.Time) (*Plumbing, []Finding, []*FileError) {
	r := &plumbingRead{p: &Plumbing{}, now: now}
	r.fences(l.FencesPath())
	r.markerQueue(l.MarkerQueuePath())
	r.producerIDs(l.ProducerIDsPath())
	return r.p, r.fs, r.errs
}

// plumbingRead is one ReadPlumbing: what it read, its findings, and the
// files it could not read or parse.
type plumbingRead struct {
	p    *Plumbing
	now  time.Time
	fs   []Finding
	errs []*FileError
}

// read reads one file, recording it among the errors when it cannot.
func (r *plumbingRead) read(path string) ([]byte, bool) {
	data, err := readFileLimited(path)
	if err != nil {
		r.errs = append(r.errs, &FileError{Path: path, Problem: readProblem(err)})
		return nil, false
	}
	return data, true
}

// fences reads every fence log (from-<broker>.json) in fdir.
func (r *plumbingRead) fences(fdir string) {
	for _, e := range listFiles(fdir) {
		path := filepath.Join(fdir, e)
		b, ok := strings.CutPrefix(e, "from-")
		b, ok2 := strings.CutSuffix(b, ".json")
		if !ok || !ok2 || b == "" {
			r.fs = append(r.fs, Finding{Severity: SevInfo, Code: CodeFenceBadName, Path: path, Message: "not a fence log (from-<broker>.json); kaas ignores it"})
			continue
		}
		data, ok := r.read(path)
		if !ok {
			continue
		}
		ff, ffs, err := ParseFenceFile(path, b, data)
		r.fs = append(r.fs, ffs...)
		if err != nil {
			r.errs = append(r.errs, asFileError(path, err))
			continue
		}
		r.p.Fences = append(r.p.Fences, ff)
	}
}

// markerQueue reads the marker queue: one inbox (to-<broker>) per target
// broker, each marker a .json file in it.
func (r *plumbingRead) markerQueue(mdir string) {
	ents, err := os.ReadDir(mdir)
	if err != nil {
		return
	}
	for _, d := range ents {
		if !d.IsDir() {
			continue
		}
		target, ok := strings.CutPrefix(d.Name(), "to-")
		if !ok {
			continue
		}
		inbox := filepath.Join(mdir, d.Name())
		for _, name := range listFiles(inbox) {
			if strings.HasSuffix(name, ".json") {
				r.marker(filepath.Join(inbox, name), target, name)
			}
		}
	}
}

// marker reads one pending marker for target and adds the finding that it
// waits, a warning once it has waited longer than the target takes to
// poll its inbox.
func (r *plumbingRead) marker(path, target, name string) {
	data, ok := r.read(path)
	if !ok {
		return
	}
	m, mfs, err := ParseMarker(path, target, name, data)
	r.fs = append(r.fs, mfs...)
	if err != nil {
		r.errs = append(r.errs, asFileError(path, err))
		return
	}
	if st, err := os.Stat(path); err == nil {
		m.ModTime = st.ModTime().UTC()
	}
	r.p.Markers = append(r.p.Markers, m)
	age := r.now.Sub(m.ModTime)
	kind := "ABORT"
	if m.Commit {
		kind = "COMMIT"
	}
	f := Finding{Severity: SevInfo, Code: CodeMarkerPending, Path: path,
		Message: fmt.Sprintf("pending %s marker for %q (producer %d epoch %d) waiting for %s", kind, DisplayName(m.TransactionalID), m.ProducerID, m.ProducerEpoch, target)}
	if !m.ModTime.IsZero() && age > MarkerStaleAge {
		f.Severity = SevWarning
		f.Message += fmt.Sprintf(", %s old: the target polls every 2 s, so it is down or cannot apply it; read_committed consumers stall on these partitions", roundAge(age))
		f.Fix = fmt.Sprintf("bring %s back (it applies its inbox on start); if it is gone for good, its partitions' new leader must get the marker: check the broker logs for MarkerWatcher warnings", target)
	}
	r.fs = append(r.fs, f)
}

// producerIDs reads every producer-id block file (<broker>-<N>.json) in
// pdir.
func (r *plumbingRead) producerIDs(pdir string) {
	for _, e := range listFiles(pdir) {
		path := filepath.Join(pdir, e)
		b, ok := strings.CutSuffix(e, ".json")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(b, '-'); i < 0 || i == len(b)-1 {
			r.fs = append(r.fs, Finding{Severity: SevInfo, Code: CodePIDBadName, Path: path, Message: "not a producer-id file (<broker>-<N>.json); kaas ignores it"})
			continue
		}
		data, ok := r.read(path)
		if !ok {
			continue
		}
		pf, pfs, err := ParseProducerIDFile(path, b, data)
		r.fs = append(r.fs, pfs...)
		if err != nil {
			r.errs = append(r.errs, asFileError(path, err))
			continue
		}
		r.p.ProducerIDs = append(r.p.ProducerIDs, pf)
	}
}

// listFiles returns the sorted regular, non-tmp file names in dir.
func listFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
