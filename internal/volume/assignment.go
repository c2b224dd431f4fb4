package volume

import (
	"github.com/kaasctl/kaasctl/internal/safefs"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/internal/grouphash"
)

// Assignment is CD/assignment.json, written by kaas's controller.
type Assignment struct {
	ControllerEpoch   int64            `json:"controllerEpoch"`
	AssignmentVersion int64            `json:"assignmentVersion"`
	GeneratedAt       string           `json:"generatedAt"`
	Controller        string           `json:"controller"`
	Brokers           []BrokerEntry    `json:"brokers"`
	Partitions        []PartitionEntry `json:"partitions"`
	ConsumerGroups    []GroupEntry     `json:"consumerGroups,omitempty"`
	// Entries is how many consumerGroups[] entries the file holds; when
	// it was read for some groups only (AssignmentOptions.Groups), more
	// than ConsumerGroups keeps.
	Entries int `json:"-"`

	// cache is set by the readers: an assignment read from a file is not
	// changed after, so its router and entry index are built once.
	cache *assignmentCache
}

type assignmentCache struct {
	once    sync.Once
	router  *grouphash.Router
	byGroup map[string][]GroupEntry
}

// SharedRouter is Router built once per assignment read from a file, for
// answering many groups (describe --all).
func (a *Assignment) SharedRouter() *grouphash.Router {
	if a.cache == nil {
		return a.Router()
	}
	a.buildCache()
	return a.cache.router
}

func (a *Assignment) buildCache() {
	a.cache.once.Do(func() {
		a.cache.router = a.Router()
		a.cache.byGroup = make(map[string][]GroupEntry, len(a.ConsumerGroups))
		for _, e := range a.ConsumerGroups {
			a.cache.byGroup[e.GroupID] = append(a.cache.byGroup[e.GroupID], e)
		}
	})
}

// EntriesOf returns the consumerGroups[] entries of one group in file
// order (from an index built once for an assignment read from a file).
func (a *Assignment) EntriesOf(group string) []GroupEntry {
	if a.cache == nil {
		return keepGroups(a.ConsumerGroups, []string{group})
	}
	a.buildCache()
	return a.cache.byGroup[group]
}

// ForGroup is a copy of the assignment holding only group's entries, for
// analyses that walk every entry but are about one group.
func (a *Assignment) ForGroup(group string) *Assignment {
	c := &Assignment{ControllerEpoch: a.ControllerEpoch, AssignmentVersion: a.AssignmentVersion, GeneratedAt: a.GeneratedAt,
		Controller: a.Controller, Brokers: a.Brokers, Partitions: a.Partitions, ConsumerGroups: a.EntriesOf(group), Entries: a.EntryCount()}
	return c
}

// AliveCount is the number of brokers[] entries with health alive.
func (a *Assignment) AliveCount() int {
	n := 0
	for _, b := range a.Brokers {
		if b.Health == grouphash.HealthAlive {
			n++
		}
	}
	return n
}

// EntryCount is how many consumerGroups[] entries the file holds, whether
// or not all were kept.
func (a *Assignment) EntryCount() int { return max(a.Entries, len(a.ConsumerGroups)) }

// BrokerEntry is one brokers[] item.
type BrokerEntry struct {
	ID       string `json:"id"`
	Health   string `json:"health"`
	LastSeen string `json:"lastSeen"`
}

// PartitionEntry is one partitions[] item.
type PartitionEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Broker    string `json:"broker"`
	Epoch     uint32 `json:"epoch"`
	Role      string `json:"role"`
}

// GroupEntry is one explicit consumerGroups[] item.
type GroupEntry struct {
	GroupID string `json:"groupId"`
	Broker  string `json:"broker"`
	Epoch   uint32 `json:"epoch"`
}

// GeneratedTime parses generatedAt leniently (9 fractional digits from the
// Rust controller, trimmed zeros from the Go one). Zero when unparseable.
func (a *Assignment) GeneratedTime() time.Time {
	t, err := time.Parse(time.RFC3339Nano, a.GeneratedAt)
	if err != nil {
		return time.Time{}
	}
	return t
}

// GrouphashBrokers converts brokers[] for the routing package.
func (a *Assignment) GrouphashBrokers() []grouphash.Broker {
	bs := make([]grouphash.Broker, len(a.Brokers))
	for i, b := range a.Brokers {
		bs[i] = grouphash.Broker{ID: b.ID, Health: b.Health}
	}
	return bs
}

// Router builds the two-tier router for this assignment.
func (a *Assignment) Router() *grouphash.Router {
	es := make([]grouphash.Entry, len(a.ConsumerGroups))
	for i, e := range a.ConsumerGroups {
		es[i] = grouphash.Entry{GroupID: e.GroupID, Broker: e.Broker}
	}
	return grouphash.NewRouter(a.GrouphashBrokers(), es)
}

// Health returns the broker's health, and whether it is listed at all.
func (a *Assignment) Health(id string) (string, bool) {
	for _, b := range a.Brokers {
		if b.ID == id {
			return b.Health, true
		}
	}
	return "", false
}

// AssignmentOptions narrows what reading an assignment keeps.
type AssignmentOptions struct {
	// Groups, when not nil, keeps only the consumerGroups[] entries of
	// these groups (every entry of each, in file order), and reports
	// findings about those entries only. The rest of the array is scanned
	// without being decoded: the answer for a few keys out of a million
	// entries costs one pass over the bytes.
	Groups []string
	// Fold keeps the first finding of each per-entry kind (entries naming
	// unknown or dead brokers, duplicates) and counts the rest in its
	// Repeats, so a million bad entries cost a million checks, not a
	// million messages. Volume check lists every one; commands that only
	// warn fold.
	Fold bool
}

// ReadAssignment reads and parses an assignment file. A missing, empty or
// undecodable file is a *FileError; oddities that kaas tolerates are findings.
func ReadAssignment(path string) (*Assignment, []Finding, error) {
	return ReadAssignmentWith(path, AssignmentOptions{})
}

// ReadAssignmentWith is ReadAssignment keeping what o says.
func ReadAssignmentWith(path string, o AssignmentOptions) (*Assignment, []Finding, error) {
	// A link is followed (the user may name a file through one, and kaas
	// follows it too), but only a regular file is read, capped.
	data, _, err := safefs.ReadFileFollow(path, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &FileError{Path: path, Problem: "file does not exist (is this the cluster dir? has a controller written it yet?)"}
		}
		return nil, nil, &FileError{Path: path, Problem: readProblem(err)}
	}
	return ParseAssignmentWith(path, data, o)
}

var knownAssignmentFields = []string{"controllerEpoch", "assignmentVersion", "generatedAt", "controller", "brokers", "partitions", "consumerGroups"}

// ParseAssignment parses assignment.json bytes; path is used in messages.
func ParseAssignment(path string, data []byte) (*Assignment, []Finding, error) {
	return ParseAssignmentWith(path, data, AssignmentOptions{})
}

// ParseAssignmentWith parses assignment.json bytes keeping what o says.
func ParseAssignmentWith(path string, data []byte, o AssignmentOptions) (*Assignment, []Finding, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FileError{Path: path, Problem: "file is empty (an interrupted write?)"}
	}
	// One decoding pass for the content; a byte scan of the top-level keys
	// tells missing fields from null ones and finds unknown fields.
	raw, problem := topLevelFields(data)
	if problem != "" {
		return nil, nil, &FileError{Path: path, Problem: problem}
	}
	a := decodeScoped(data, raw, o.Groups)
	if a == nil {
		a = &Assignment{}
		if err := json.Unmarshal(data, a); err != nil {
			return nil, nil, &FileError{Path: path, Problem: describeJSONError(data, err)}
		}
		a.Entries = len(a.ConsumerGroups)
		if o.Groups != nil {
			a.ConsumerGroups = keepGroups(a.ConsumerGroups, o.Groups)
		}
	}
	af := &assignmentFindings{path: path, fold: o.Fold}
	af.topLevel(a, raw)
	lb := listedBrokers{seen: make(map[string]int, len(a.Brokers)), health: make(map[string]string, len(a.Brokers))}
	af.brokers(a, raw, lb)
	af.entries(a, lb)
	a.cache = &assignmentCache{}
	if a.Brokers == nil {
		a.Brokers = []BrokerEntry{}
	}
	if a.Partitions == nil {
		a.Partitions = []PartitionEntry{}
	}
	return a, af.fs, nil
}

// assignmentFindings collects the findings about one assignment file, in
// the order its checks run.
type assignmentFindings struct {
	path string
	fs   []Finding
	// fold keeps the first per-entry finding of each kind and counts the
	// rest in its Repeats; folded is the index of that first one.
	fold   bool
	folded map[string]int
}

// add appends a finding about the file.
func (af *assignmentFindings) add(sev Severity, code, msg, fix string) {
	af.fs = append(af.fs, Finding{Severity: sev, Code: code, Path: af.path, Message: msg, Fix: fix})
}

// addEntry appends a per-entry finding; with fold, the first of each kind
// carries the count of the rest (no message is built for them).
func (af *assignmentFindings) addEntry(sev Severity, code string, msg func() string, fix string) {
	if af.fold {
		if i, ok := af.folded[code]; ok {
			af.fs[i].Repeats++
			return
		}
		if af.folded == nil {
			af.folded = map[string]int{}
		}
		af.folded[code] = len(af.fs)
	}
	af.add(sev, code, msg(), fix)
}

// topLevel checks the document's fields: brokers and partitions missing
// or null (brokers refuse the file), no version, fields kaasctl does not
// know, and a generatedAt that is not a time.
func (af *assignmentFindings) topLevel(a *Assignment, raw map[string][]byte) {
	for _, name := range []string{"brokers", "partitions"} {
		v, ok := raw[name]
		switch {
		case !ok:
			af.add(SevError, "assignment."+name+"Missing", fmt.Sprintf("%q is missing; kaas brokers refuse this file and keep their last good assignment", name),
				"wait for the controller to rewrite the file; if it persists, check the controller's logs")
		case string(bytes.TrimSpace(v)) == "null":
			af.add(SevError, "assignment."+name+"Null", fmt.Sprintf("%q is null (an old Go-era writer?); kaas brokers refuse this file", name),
				"wait for the controller to rewrite the file; if it persists, check the controller's logs")
		}
	}
	if _, ok := raw["assignmentVersion"]; !ok {
		af.add(SevWarning, "assignment.versionMissing", "assignmentVersion is missing; it reads as 0", "")
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(knownAssignmentFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		af.add(SevInfo, "assignment.unknownFields", "fields kaasctl does not know (ignored, as kaas does): "+strings.Join(unknown, ", "), "")
	}
	if a.GeneratedAt != "" && a.GeneratedTime().IsZero() {
		af.add(SevWarning, "assignment.badTimestamp", fmt.Sprintf("generatedAt %q is not an RFC 3339 time", a.GeneratedAt), "")
	}
}

// listedBrokers is what the entry checks need of brokers[]: how often each
// id is listed, and its health as first listed (as Health answers).
type listedBrokers struct {
	seen   map[string]int
	health map[string]string
}

// brokers checks brokers[], filling lb: an id listed twice (the hash
// divisor counts it twice), an unknown health, an empty id, and no broker
// alive. The caller makes lb's maps, so that they stay on its stack.
func (af *assignmentFindings) brokers(a *Assignment, raw map[string][]byte, lb listedBrokers) {
	alive := 0
	for _, b := range a.Brokers {
		lb.seen[b.ID]++
		if lb.seen[b.ID] == 1 {
			lb.health[b.ID] = b.Health
		}
		if lb.seen[b.ID] == 2 {
			af.add(SevError, "assignment.duplicateBroker", fmt.Sprintf("broker %q is listed more than once; the hash divisor counts it twice", b.ID),
				"the controller must rewrite the file; restart the controller if it keeps writing duplicates")
		}
		switch b.Health {
		case grouphash.HealthAlive:
			alive++
		case "draining", "dead":
		default:
			af.add(SevWarning, "assignment.unknownHealth", fmt.Sprintf("broker %q has health %q (known: alive, draining, dead); it counts as down", b.ID, b.Health), "")
		}
		if b.ID == "" {
			af.add(SevError, "assignment.emptyBrokerID", "a broker entry has an empty id", "")
		}
	}
	if len(a.Brokers) > 0 && alive == 0 {
		af.add(SevError, "assignment.noAliveBroker", "no broker is alive: every group and transactional id gets COORDINATOR_NOT_AVAILABLE", "start brokers; check the controller")
	} else if len(a.Brokers) == 0 && raw["brokers"] != nil && string(bytes.TrimSpace(raw["brokers"])) != "null" {
		af.add(SevError, "assignment.noBrokers", "brokers[] is empty: every group and transactional id gets COORDINATOR_NOT_AVAILABLE", "start brokers; check the controller")
	}
}

// entries checks consumerGroups[]: a group with a second entry (the first
// wins), and an entry naming a broker that is not listed or not alive
// (every broker answers NOT_COORDINATOR).
func (af *assignmentFindings) entries(a *Assignment, lb listedBrokers) {
	firstOf := duplicateEntries(a.ConsumerGroups)
	for i, e := range a.ConsumerGroups {
		if first, dup := firstOf[i]; dup {
			prev := a.ConsumerGroups[first].Broker
			af.addEntry(SevWarning, "assignment.duplicateEntry", func() string {
				return fmt.Sprintf("group %q has more than one consumerGroups entry (%s, then %s); the first wins", e.GroupID, prev, e.Broker)
			}, "")
			continue
		}
		if lb.seen[e.Broker] == 0 {
			af.addEntry(SevError, "assignment.entryUnknownBroker", func() string {
				return fmt.Sprintf("group %q is explicitly assigned to %q, which is not in brokers[]: every broker answers NOT_COORDINATOR", e.GroupID, e.Broker)
			}, "wait for the next controller recompute (a broker join/leave or topic change); until then the group cannot commit")
		} else if hl := lb.health[e.Broker]; hl != grouphash.HealthAlive {
			af.addEntry(SevError, "assignment.entryDeadBroker", func() string {
				return fmt.Sprintf("group %q is explicitly assigned to %q, whose health is %q: every broker answers NOT_COORDINATOR", e.GroupID, e.Broker, hl)
			}, "wait for the next controller recompute; until then the group cannot commit")
		}
	}
}

// duplicateEntries maps the index of every entry that repeats an earlier
// entry's group to the index of that group's first entry. It sorts an
// index instead of keeping a map of every group: a million entries cost
// 4 MB, and controllers write them in group order, which sorts in one pass.
func duplicateEntries(es []GroupEntry) map[int]int {
	idx := make([]int32, len(es))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(x, y int32) int {
		if c := strings.Compare(es[x].GroupID, es[y].GroupID); c != 0 {
			return c
		}
		return int(x - y)
	})
	var out map[int]int
	for i := 1; i < len(idx); i++ {
		prev, cur := idx[i-1], idx[i]
		if es[prev].GroupID != es[cur].GroupID {
			continue
		}
		if out == nil {
			out = map[int]int{}
		}
		first := int(prev)
		if f, ok := out[first]; ok {
			first = f
		}
		out[int(cur)] = first
	}
	return out
}

// keepGroups keeps the entries of the named groups, in order.
func keepGroups(es []GroupEntry, groups []string) []GroupEntry {
	want := make(map[string]bool, len(groups))
	for _, g := range groups {
		want[g] = true
	}
	var out []GroupEntry
	for _, e := range es {
		if want[e.GroupID] {
			out = append(out, e)
		}
	}
	return out
}

// decodeScoped decodes an assignment keeping only the consumerGroups[]
// entries of groups (all of them when groups is nil), without decoding the
// others: each entry's groupId is compared as raw bytes, and entries of the
// plain shape are decoded by a byte scan (others by encoding/json, one
// entry at a time). It returns nil when the document is anything but
// the plain shape (invalid JSON, a field of the wrong type, an entry that
// is not an object, escapes in a key), and the caller decodes it whole,
// which gives the same answer and the exact error.
func decodeScoped(data []byte, raw map[string][]byte, groups []string) (a *Assignment) {
	// The validity check runs beside the decoding (a 60 MB file: a sixth
	// of a second each way). Until it answers the bytes may be anything,
	// so a decoding that trips over them is an invalid file too.
	valid := make(chan bool, 1)
	go func() { valid <- json.Valid(data) }()
	defer func() {
		if recover() != nil || !<-valid {
			a = nil
		}
	}()
	a = &Assignment{}
	if !decodeTopFields(a, raw) {
		return nil
	}
	cg, ok := raw["consumerGroups"]
	if !ok || string(cg) == "null" {
		return a
	}
	var want map[string]bool
	if groups != nil {
		want = make(map[string]bool, len(groups))
		for _, g := range groups {
			want[g] = true
		}
	} else {
		a.ConsumerGroups = make([]GroupEntry, 0, bytes.Count(cg, []byte(`"groupId"`)))
	}
	if len(cg) == 0 || cg[0] != '[' || !decodeEntries(a, cg, want) {
		return nil
	}
	return a
}

// decodeTopFields decodes every top-level field but consumerGroups into a.
// It is false when the whole document must be decoded by encoding/json
// instead: a field of the wrong type, or a known key spelt in another case
// (which encoding/json would match).
func decodeTopFields(a *Assignment, raw map[string][]byte) bool {
	// json.Unmarshal leaves a field alone for JSON null, as here.
	fields := map[string]any{
		"controllerEpoch": &a.ControllerEpoch, "assignmentVersion": &a.AssignmentVersion, "generatedAt": &a.GeneratedAt,
		"controller": &a.Controller, "brokers": &a.Brokers, "partitions": &a.Partitions,
	}
	for k, v := range raw {
		if k == "consumerGroups" {
			continue
		}
		dst, ok := fields[k]
		if !ok {
			if !slices.Contains(knownAssignmentFields, k) {
				for known := range fields {
					if strings.EqualFold(k, known) || strings.EqualFold(k, "consumerGroups") {
						return false
					}
				}
				continue
			}
			return false
		}
		if json.Unmarshal(v, dst) != nil {
			return false
		}
	}
	return true
}

// decodeEntries walks the consumerGroups array cg (valid JSON, starting
// with '['), counting every entry and keeping those of want (all when want
// is nil). It is false on an entry the byte scan cannot decide and
// encoding/json cannot decode either.
func decodeEntries(a *Assignment, cg []byte, want map[string]bool) bool {
	brokers := map[string]string{} // one string per broker id, shared by its entries
	i := skipSpace(cg, 1)
	for i < len(cg) && cg[i] != ']' {
		if cg[i] != '{' {
			return false
		}
		end := skipValue(cg, i)
		obj := cg[i:end]
		id, ok := entryGroupID(obj)
		if !ok {
			return false
		}
		a.Entries++
		// Every entry is type-checked, kept or not: brokers refuse a file
		// with one bad entry, and so does the whole decode.
		keep := want == nil || want[string(id)]
		e, plain := plainEntry(obj, brokers, keep)
		if !plain {
			e = GroupEntry{}
			if json.Unmarshal(obj, &e) != nil {
				return false
			}
		}
		if keep {
			a.ConsumerGroups = append(a.ConsumerGroups, e)
		}
		i = skipSpace(cg, end)
		if i < len(cg) && cg[i] == ',' {
			i = skipSpace(cg, i+1)
		}
	}
	return true
}

// plainEntry decodes an entry object whose keys are exactly groupId,
// broker and epoch (any order, each at most once) with plain string values
// and a small non-negative epoch: what every controller writes. ok is
// false for anything else, which encoding/json then decodes. Without keep
// it only checks the shape (no strings are made).
func plainEntry(obj []byte, brokers map[string]string, keep bool) (e GroupEntry, ok bool) {
	var seen [3]bool
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend := skipString(obj, i)
		key := string(obj[i+1 : kend-1]) // no allocation: compared only
		i = skipSpace(obj, kend)
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		v := obj[i:vend]
		switch key {
		case "groupId":
			if seen[0] || !plainString(&v) {
				return e, false
			}
			seen[0] = true
			if keep {
				e.GroupID = string(v)
			}
		case "broker":
			if seen[1] || !plainString(&v) {
				return e, false
			}
			seen[1] = true
			if keep {
				e.Broker = sharedBroker(brokers, v)
			}
		case "epoch":
			n, ok := plainEpoch(v)
			if seen[2] || !ok {
				return e, false
			}
			seen[2], e.Epoch = true, n
		default:
			return e, false
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return e, true
}

// plainString checks that *v is a JSON string without escapes, of valid
// UTF-8, and narrows it to the string's bytes.
func plainString(v *[]byte) bool {
	s := *v
	if len(s) < 2 || s[0] != '"' || bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return false
	}
	*v = s[1 : len(s)-1]
	return true
}

// sharedBroker is the one string kept for a broker id, so the entries
// naming the same broker share it.
func sharedBroker(brokers map[string]string, v []byte) string {
	b, ok := brokers[string(v)]
	if !ok {
		b = string(v)
		brokers[b] = b
	}
	return b
}

// plainEpoch decodes an epoch of at most 9 decimal digits (no sign,
// fraction or exponent).
func plainEpoch(v []byte) (uint32, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	var n uint32
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint32(c-'0')
	}
	return n, true
}

// entryGroupID finds the raw groupId string of one entry object (valid
// JSON). ok is false for a shape the byte scan does not decide: escapes in
// the id or a key, a non-string id, a key spelt in another case, or more
// than one groupId.
func entryGroupID(obj []byte) (id []byte, ok bool) {
	found := false
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend := skipString(obj, i)
		key := obj[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(obj, kend)
		i = skipSpace(obj, i+1) // the colon
		vend := skipValue(obj, i)
		if bytes.EqualFold(key, []byte("groupId")) {
			if found || string(key) != "groupId" || obj[i] != '"' {
				return nil, false
			}
			v := obj[i+1 : vend-1]
			if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
				return nil, false // decoding would change these bytes
			}
			id, found = v, true
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return id, true
}

// topLevelFields maps each top-level key of a JSON object to its raw value
// (slices of data, not copies). It is a byte scan that only finds where
// values start and end; json.Unmarshal does the validation. A document
// that is not an object yields a problem in words.
func topLevelFields(data []byte) (map[string][]byte, string) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		switch {
		case bytes.HasPrefix(data[i:], []byte("null")):
			return nil, "the file holds JSON null, not an assignment object"
		case i < len(data) && data[i] == '[':
			return nil, "the file holds a JSON array, not an assignment object"
		}
		return nil, "not a JSON object (the file should start with '{')"
	}
	out := map[string][]byte{}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		if data[i] != '"' {
			return out, "" // malformed: json.Unmarshal will say where
		}
		end := skipString(data, i)
		var key string
		if json.Unmarshal(data[i:end], &key) != nil {
			return out, ""
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return out, ""
		}
		start := skipSpace(data, i+1)
		vend := skipValue(data, start)
		out[key] = data[start:vend]
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return out, ""
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipString(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}
