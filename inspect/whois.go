// Package inspect holds kaasctl's read-only analysis: routing answers,
// diffs, traces and checks. Functions take parsed data and return views;
// they do no I/O, so every answer can be tested without a volume.
package inspect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// Kind is what a key names.
type Kind string

const (
	KindGroup Kind = "group"
	KindTxn   Kind = "txn"
)

// WhatIf is a hypothetical broker set.
type WhatIf struct {
	// Down lists brokers that stop.
	Down []string
	// Brokers replaces the broker set (all alive).
	Brokers []string
	// KeepListed keeps down brokers in brokers[] with health "dead" (the
	// "stable divisor" the kaas design describes) instead of dropping them,
	// as today's controller does.
	KeepListed bool
	// Placement models the controller's next recompute for groups that are
	// active then: each key whose coordinator survives and that has no
	// surviving entry gets one, placed by "rendezvous" (today's kaas
	// controller) or "hash" (the design). A group whose coordinator went
	// down is not reported active, so it falls back to the hash tier. ""
	// models groups that were not active: no new entries.
	Placement string
	// Failover is what the next controller does with the previous entries
	// when the controller itself is among the brokers that stop:
	// FailoverDrop (Go: its first version has none) or FailoverReload
	// (Rust, and "": it balances them as any other version). FailoverWhy
	// names the generation assumed and where the model comes from.
	Failover    FailoverModel
	FailoverWhy string
	// Rule is the generation's failover rule (the volume model's row): with
	// FirstReportEmpty every answer that keeps or places an entry at a
	// failover also says what it is if its broker connects last.
	Rule volume.FailoverRule
}

// Active reports whether any hypothetical change was asked for.
func (w WhatIf) Active() bool { return len(w.Down) > 0 || len(w.Brokers) > 0 }

// Placements lists the values WhatIf.Placement takes.
var Placements = []string{"rendezvous", "hash"}

// WhoisResult is one key's answer. Field names are the JSON contract.
type WhoisResult struct {
	Key                string  `json:"key"`
	Kind               Kind    `json:"kind"`
	Coordinator        string  `json:"coordinator"`
	Tier               string  `json:"tier"`
	HashCoordinator    string  `json:"hashCoordinator"`
	HashTier           string  `json:"hashTier"`
	Preferred          string  `json:"preferred"`
	Slot               int     `json:"slot"`
	NumBrokers         int     `json:"numBrokers"`
	AliveBrokers       int     `json:"aliveBrokers"`
	FNV1a32            string  `json:"fnv1a32"`
	ExplicitBroker     string  `json:"explicitBroker,omitempty"`
	TxnSlotFile        string  `json:"txnSlotFile,omitempty"`
	CurrentCoordinator *string `json:"currentCoordinator,omitempty"`
	Moves              *bool   `json:"moves,omitempty"`
	// IfLastToConnect is the answer when the broker that reports the group
	// active connects its heartbeat to the new controller last (a Rust
	// controller failover: that broker's first heartbeat reports no group,
	// so the group gets no entry and routes by the hash tier).
	IfLastToConnect *WhoisAlternative `json:"ifLastToConnect,omitempty"`
	Warnings        []string          `json:"warnings"`
}

// WhoisAlternative is an answer that holds under a condition the volume
// cannot tell.
type WhoisAlternative struct {
	// Broker is the broker whose timing decides it.
	Broker      string `json:"broker"`
	Coordinator string `json:"coordinator"`
	Tier        string `json:"tier"`
	Moves       bool   `json:"moves"`
}

// Whois answers "who coordinates this key, and why" for one broker set.
type Whois struct {
	Kind Kind
	// Scenario describes the broker set in words (for the table header).
	Scenario string
	router   *grouphash.Router
	health   map[string]string
	current  *grouphash.Router // set in what-if mode: today's answer
	// place gives an active group's new entry (what-if with a placement).
	place func(group string, hashPick string) string
	// dropped are the groups whose entry a new Go controller drops (a
	// what-if that stops the controller), for their warnings.
	dropped map[string]bool
	// Failover describes the controller failover a what-if implies (nil
	// when the controller keeps running).
	Failover *WhatIfFailover
	// lastToConnect: answers with an entry carry IfLastToConnect.
	lastToConnect bool
	// countsJSON is the constant middle of every streamed object.
	countsJSON []byte
	// slotJSON[i] is everything between the key and the hash value for a
	// group the hash tier places at slot i, with no entry and nothing to
	// warn about: that answer depends on the slot alone.
	slotJSON [][]byte
}

// NewWhois prepares answers for an assignment, optionally under a
// hypothetical broker set.
func NewWhois(a *volume.Assignment, kind Kind, w WhatIf) (*Whois, error) {
	brokers := a.GrouphashBrokers()
	entries := make([]grouphash.Entry, 0, len(a.ConsumerGroups))
	for _, e := range a.ConsumerGroups {
		entries = append(entries, grouphash.Entry{GroupID: e.GroupID, Broker: e.Broker})
	}
	wh := &Whois{Kind: kind}
	alive := 0
	for _, b := range brokers {
		if b.Health == grouphash.HealthAlive {
			alive++
		}
	}
	wh.Scenario = fmt.Sprintf("assignment v%d (controller epoch %d, controller %s): %d brokers listed, %d alive, %d explicit entries",
		a.AssignmentVersion, a.ControllerEpoch, orNone(a.Controller), len(brokers), alive, a.EntryCount())
	if w.Active() {
		var err error
		if brokers, entries, err = wh.whatIf(a, w, brokers, entries); err != nil {
			return nil, err
		}
	} else if w.Placement != "" {
		return nil, fmt.Errorf("--placement models the next recompute: it goes with --what-if-down or --what-if-brokers")
	}
	wh.prepare(brokers, entries)
	return wh, nil
}

// whatIf applies the hypothetical broker set to the assignment's brokers
// and entries, keeping today's routing to compare with: the controller
// failover it implies (a Go controller's first version drops every
// entry), the scenario in words, and the --placement of active groups.
func (wh *Whois) whatIf(a *volume.Assignment, w WhatIf, brokers []grouphash.Broker, entries []grouphash.Entry) ([]grouphash.Broker, []grouphash.Entry, error) {
	wh.current = grouphash.NewRouter(brokers, entries)
	brokers, entries, err := applyWhatIf(brokers, entries, w)
	if err != nil {
		return nil, nil, err
	}
	var alive []string
	ring := grouphash.NewRing(brokers)
	for _, b := range ring.IDs() {
		if ring.Alive(b) && !slices.Contains(alive, b) {
			alive = append(alive, b)
		}
	}
	wh.Failover = whatIfFailover(a, w, alive, len(entries))
	if wh.Failover != nil && wh.Failover.LastToConnect {
		wh.lastToConnect = true
	}
	if wh.Failover != nil && wh.Failover.Model == FailoverDrop && wh.Failover.Written {
		wh.dropped = map[string]bool{}
		for _, e := range entries {
			wh.dropped[e.GroupID] = true
		}
		entries = nil
	}
	wh.Scenario = whatIfScenario(w, brokers, entries)
	if wh.Failover != nil {
		wh.Scenario += "; " + wh.Failover.Text
	}
	if err := wh.placement(w.Placement, alive); err != nil {
		return nil, nil, err
	}
	return brokers, entries, nil
}

// placement sets how a what-if places every key as an active group
// (rendezvous over the alive brokers, as today's controller does, or the
// routing hash); after a Go failover that drops the entries it only names
// the version after, since the failover's first version places nothing.
func (wh *Whois) placement(placement string, alive []string) error {
	switch {
	case placement != "" && wh.dropped != nil:
		if placement != "rendezvous" && placement != "hash" {
			return fmt.Errorf("--placement %q: choose rendezvous or hash", placement)
		}
		wh.Scenario += "; --placement models the version after (this answer is the failover's first version, which places nothing)"
	case placement == "":
	case placement == "rendezvous":
		wh.place = func(g, _ string) string { return grouphash.Rendezvous(g, alive) }
		wh.Scenario += "; every key is treated as an active group and placed as today's controller does (rendezvous)"
	case placement == "hash":
		wh.place = func(_, hashPick string) string { return hashPick }
		wh.Scenario += "; every key is treated as an active group and placed by the routing hash"
	default:
		return fmt.Errorf("--placement %q: choose rendezvous or hash", placement)
	}
	return nil
}

// prepare builds the router the answers come from and what every
// streamed answer shares: the broker counts, the answer of each hash slot
// for a group without an entry (groups, outside a what-if), and each
// broker's health.
func (wh *Whois) prepare(brokers []grouphash.Broker, entries []grouphash.Entry) {
	wh.router = grouphash.NewRouter(brokers, entries)
	wh.countsJSON = fmt.Appendf(nil, `,"numBrokers":%d,"aliveBrokers":%d,"fnv1a32":"0x`, wh.router.Ring().Len(), wh.router.Ring().AliveCount())
	if wh.Kind == KindGroup && wh.current == nil {
		for i := 0; i < wh.router.Ring().Len(); i++ {
			hp := wh.router.Ring().PickHash(uint32(i))
			var frag []byte
			if hp.Tier == grouphash.TierHash {
				frag = wh.appendAnswer(nil, grouphash.Resolution{Coordinator: hp.Coordinator, Tier: hp.Tier, Hash: hp})
			}
			wh.slotJSON = append(wh.slotJSON, frag)
		}
	}
	wh.health = make(map[string]string, len(brokers))
	for _, b := range brokers {
		if _, seen := wh.health[b.ID]; !seen {
			wh.health[b.ID] = b.Health
		}
	}
}

// WhatIfFailover is the controller failover a what-if implies: the
// controller is among the brokers that stop.
type WhatIfFailover struct {
	Controller     string `json:"controller"`
	NextController string `json:"nextController"`
	// Written is false when no broker stays alive (nobody writes).
	Written          bool          `json:"written"`
	NextVersion      int64         `json:"nextVersion"`
	NextEpochAtLeast int64         `json:"nextControllerEpochAtLeast"`
	Model            FailoverModel `json:"model"`
	EntriesBefore    int           `json:"entriesBefore"`
	// LastToConnect: the groups of the broker that connects its heartbeat
	// to the new controller last get no entry (FailoverRule.FirstReportEmpty);
	// each answer's ifLastToConnect says where its group goes then. Timing
	// is when the version comes, by how the controller stops.
	LastToConnect bool   `json:"lastToConnectLosesEntries"`
	Timing        string `json:"timing,omitempty"`
	// Text is the scenario clause; Why the generation assumed and where
	// the model comes from.
	Text string `json:"text"`
	Why  string `json:"why"`
}

// whatIfFailover is the failover when the what-if stops the controller,
// else nil. kept is how many entries survive the broker change alone.
func whatIfFailover(a *volume.Assignment, w WhatIf, alive []string, kept int) *WhatIfFailover {
	ctrl := a.Controller
	if ctrl == "" {
		return nil
	}
	down := slices.Contains(w.Down, ctrl) || (len(w.Brokers) > 0 && !slices.Contains(w.Brokers, ctrl))
	if !down {
		return nil
	}
	fm := w.Failover
	if fm == "" {
		fm = FailoverReload
	}
	f := &WhatIfFailover{Controller: ctrl, Model: fm, Why: w.FailoverWhy, EntriesBefore: a.EntryCount(),
		NextVersion: a.AssignmentVersion + 1, NextEpochAtLeast: a.ControllerEpoch + 1}
	if len(alive) == 0 {
		f.Text = fmt.Sprintf("the controller %s stops with every broker: nobody writes a version (v%d stays)", ctrl, a.AssignmentVersion)
		return f
	}
	f.Written = true
	f.NextController = NextController(alive)
	head := fmt.Sprintf("the controller %s stops: a new controller (%s if the lowest alive id wins the lease) writes v%d at controller epoch %d or later", ctrl, f.NextController, f.NextVersion, f.NextEpochAtLeast)
	switch fm {
	case FailoverDrop:
		f.Text = head + fmt.Sprintf(" with no consumerGroups: all %d explicit entries dropped, every group routes by the hash tier over the alive brokers", a.EntryCount())
	default:
		f.Text = head + fmt.Sprintf(", reloading the previous entries: %d of %d kept (those on alive brokers, for groups still active)", kept, a.EntryCount())
		if w.Rule.FirstReportEmpty {
			f.LastToConnect = true
			f.Text += "; but " + w.Rule.LastToConnect + " (each answer's ifLastToConnect says where its group goes then)"
		}
	}
	f.Timing = w.Rule.Timing
	if f.Timing != "" {
		f.Text += "; when: " + f.Timing
	}
	if w.Rule.ExtraVersionOnStop {
		f.Text += "; " + w.Rule.ExtraVersion
	}
	if w.FailoverWhy != "" {
		f.Text += " [" + w.FailoverWhy + "]"
	}
	return f
}

// applyWhatIf models the controller's next publication: brokers that stop
// leave brokers[] (or stay as "dead" with KeepListed), and explicit entries
// on a broker that is no longer alive are retired, because that broker can
// no longer report the group as active.
func applyWhatIf(brokers []grouphash.Broker, entries []grouphash.Entry, w WhatIf) ([]grouphash.Broker, []grouphash.Entry, error) {
	listed := map[string]bool{}
	for _, b := range brokers {
		listed[b.ID] = true
	}
	for _, d := range w.Down {
		if !listed[d] && len(w.Brokers) == 0 {
			ids := make([]string, 0, len(listed))
			for id := range listed {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return nil, nil, fmt.Errorf("--what-if-down %s: no such broker in the assignment (brokers: %s)", d, strings.Join(ids, ", "))
		}
	}
	if len(w.Brokers) > 0 {
		brokers = brokers[:0:0]
		for _, id := range w.Brokers {
			brokers = append(brokers, grouphash.Broker{ID: id, Health: grouphash.HealthAlive})
		}
	}
	var next []grouphash.Broker
	for _, b := range brokers {
		switch {
		case !slices.Contains(w.Down, b.ID):
			next = append(next, b)
		case w.KeepListed:
			next = append(next, grouphash.Broker{ID: b.ID, Health: "dead"})
		}
	}
	aliveNext := map[string]bool{}
	for _, b := range next {
		if b.Health == grouphash.HealthAlive {
			aliveNext[b.ID] = true
		}
	}
	var keep []grouphash.Entry
	for _, e := range entries {
		if aliveNext[e.Broker] {
			keep = append(keep, e)
		}
	}
	return next, keep, nil
}

func whatIfScenario(w WhatIf, brokers []grouphash.Broker, entries []grouphash.Entry) string {
	var parts []string
	if len(w.Brokers) > 0 {
		parts = append(parts, "brokers "+strings.Join(w.Brokers, ","))
	}
	if len(w.Down) > 0 {
		how := "dropped from brokers[] as today's controller does"
		if w.KeepListed {
			how = "kept in brokers[] as dead"
		}
		parts = append(parts, strings.Join(w.Down, ",")+" down ("+how+")")
	}
	alive := 0
	for _, b := range brokers {
		if b.Health == grouphash.HealthAlive {
			alive++
		}
	}
	return fmt.Sprintf("what if %s: %d brokers listed, %d alive, %d explicit entries kept (entries on brokers that are not alive are retired)",
		strings.Join(parts, "; "), len(brokers), alive, len(entries))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (wh *Whois) resolve(key []byte) grouphash.Resolution {
	return wh.resolveHash(key, grouphash.FNV1a32Bytes(key))
}

func (wh *Whois) resolveHash(key []byte, h uint32) grouphash.Resolution {
	if wh.Kind == KindTxn {
		return wh.router.TxnHash(string(key), h)
	}
	r := wh.router.GroupKeyHash(key, h)
	if wh.place != nil && !r.HasExplicit && r.Hash.Coordinator != "" {
		// A group is active at the recompute only if its coordinator
		// survives to report it; a group on a broker that went down loses
		// its entry and falls back to the hash tier.
		if cur := wh.current.GroupKeyHash(key, h).Coordinator; wh.router.Ring().Alive(cur) {
			b := wh.place(string(key), r.Hash.Coordinator)
			r.HasExplicit, r.ExplicitBroker, r.Coordinator, r.Tier = true, b, b, grouphash.TierExplicit
		}
	}
	return r
}

// ifLastToConnect is a group's answer when the broker reporting it active
// (its coordinator now, cur) connects to the new controller last: no
// entry, the hash tier over the alive brokers. nil when the answer has no
// entry to lose or the failover has no such race.
func (wh *Whois) ifLastToConnect(r grouphash.Resolution, cur string) *WhoisAlternative {
	if !wh.lastToConnect || wh.Kind != KindGroup || !r.HasExplicit || cur == "" {
		return nil
	}
	return &WhoisAlternative{Broker: cur, Coordinator: r.Hash.Coordinator, Tier: string(r.Hash.Tier), Moves: r.Hash.Coordinator != cur}
}

// Key scan flags: what one pass over a key found.
const (
	keyEscape  = 1 << iota // a byte that JSON must escape (or non-ASCII)
	keySpecial             // '/', NUL or '.' somewhere: the group id needs the full check
)

// scanKey hashes a key and classifies its bytes in one pass, so the
// streaming path reads each key once.
func scanKey(key []byte) (uint32, int) {
	h := uint32(0x811c9dc5) // FNV-1a 32, as grouphash.FNV1a32Bytes
	fl := 0
	for _, c := range key {
		h = (h ^ uint32(c)) * 0x01000193
		if !plainJSON[c] {
			fl |= keyEscape
		}
		if c == '/' || c == 0 || c == '.' {
			fl |= keySpecial
		}
	}
	return h, fl
}

// ResolveAll answers each key in order (Resolve).
func (wh *Whois) ResolveAll(keys []string) []WhoisResult {
	results := make([]WhoisResult, len(keys))
	for i, k := range keys {
		results[i] = wh.Resolve(k)
	}
	return results
}

// Resolve answers for one key.
func (wh *Whois) Resolve(key string) WhoisResult {
	kb := []byte(key)
	r := wh.resolve(kb)
	res := WhoisResult{
		Key:             key,
		Kind:            wh.Kind,
		Coordinator:     r.Coordinator,
		Tier:            string(r.Tier),
		HashCoordinator: r.Hash.Coordinator,
		HashTier:        string(r.Hash.Tier),
		Preferred:       r.Hash.Preferred,
		Slot:            r.Hash.Slot,
		NumBrokers:      wh.router.Ring().Len(),
		AliveBrokers:    wh.router.Ring().AliveCount(),
		FNV1a32:         fmt.Sprintf("0x%08x", r.Hash.Hash),
		ExplicitBroker:  r.ExplicitBroker,
		Warnings:        wh.warnings(kb, r),
	}
	if wh.Kind == KindTxn {
		res.TxnSlotFile = grouphash.TxnSlotFile(key)
	}
	if wh.current != nil {
		var cur grouphash.Resolution
		if wh.Kind == KindTxn {
			cur = wh.current.TxnKey(kb)
		} else {
			cur = wh.current.GroupKey(kb)
		}
		c := cur.Coordinator
		moves := c != r.Coordinator
		res.CurrentCoordinator, res.Moves = &c, &moves
		res.IfLastToConnect = wh.ifLastToConnect(r, c)
	}
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	return res
}

// warnings explains what an operator must know about this answer. It
// allocates only when there is something to say.
func (wh *Whois) warnings(key []byte, r grouphash.Resolution) []string {
	return wh.warningsScanned(key, r, keyEscape|keySpecial)
}

// warningsScanned is warnings with scanKey's flags: a plain ASCII key of
// sane length without '/', NUL or '.' needs no file-name check.
func (wh *Whois) warningsScanned(key []byte, r grouphash.Resolution, fl int) []string {
	drop := wh.dropped != nil && wh.dropped[string(key)]
	if !drop && !r.HasExplicit && r.Hash.Tier == grouphash.TierHash && fl == 0 && len(key) > 0 && len(key) <= 246 {
		return nil
	}
	var ws []string
	if drop {
		ws = append(ws, fmt.Sprintf("its explicit entry is dropped: the new controller's first version has no consumerGroups (controller failover, %s model)", FailoverDrop))
	}
	if r.HasExplicit {
		h, listed := wh.health[r.ExplicitBroker]
		switch {
		case !listed:
			ws = append(ws, fmt.Sprintf("explicit entry names %s, which is not in brokers[]: every broker answers NOT_COORDINATOR until the controller recomputes", r.ExplicitBroker))
		case h != grouphash.HealthAlive:
			ws = append(ws, fmt.Sprintf("explicit entry names %s, whose health is %q: every broker answers NOT_COORDINATOR until the controller recomputes", r.ExplicitBroker, h))
		}
		if r.Hash.Coordinator != r.ExplicitBroker && r.Hash.Coordinator != "" {
			ws = append(ws, fmt.Sprintf("the hash tier says %s: when this entry is retired the group moves (one rebalance)", r.Hash.Coordinator))
		}
	}
	switch r.Hash.Tier {
	case grouphash.TierNone:
		if !r.HasExplicit {
			ws = append(ws, "no alive broker: clients get COORDINATOR_NOT_AVAILABLE")
		}
	case grouphash.TierHashFallback:
		ws = append(ws, fmt.Sprintf("preferred broker %s is %s; the hash fell back to the alive brokers", r.Hash.Preferred, orNone(wh.health[r.Hash.Preferred])))
	}
	if wh.Kind == KindGroup {
		if p := GroupIDProblem(key); p != "" {
			ws = append(ws, "kaas cannot keep offsets for this group id: "+p)
		}
	}
	return ws
}

// GroupIDProblem says why kaas cannot store a group id as a file name
// (CD/__consumer_offsets/<id>.json, unescaped), or "" when it can.
func GroupIDProblem(id []byte) string {
	switch {
	case len(id) == 0:
		return "the id is empty (file \".json\")"
	case len(id) > 246:
		return fmt.Sprintf("the id is %d bytes; kaas's <id>.json.tmp exceeds the 255-byte file name limit, so commits are silently lost", len(id))
	case slices.Contains(id, 0):
		return "the id contains a NUL byte"
	case !utf8.Valid(id):
		return "the id is not valid UTF-8 (kaas rejects it on the wire)"
	case id[0] == '/':
		return "the id is an absolute path: kaas writes the offsets file outside the cluster dir"
	case string(id) == ".." || hasDotDot(id):
		return "the id contains '..': kaas writes the offsets file outside the offsets dir"
	case slices.Contains(id, '/'):
		return "the id contains '/': kaas's write fails (no such directory) and commits are silently lost"
	}
	return ""
}

// hasDotDot reports whether a '/'-separated element of id is "..".
func hasDotDot(id []byte) bool {
	start := 0
	for i := 0; i <= len(id); i++ {
		if i == len(id) || id[i] == '/' {
			if i-start == 2 && id[start] == '.' && id[start+1] == '.' {
				return true
			}
			start = i + 1
		}
	}
	return false
}

// AppendJSON appends the key's answer as one compact JSON object (the same
// fields and values as encoding/json of Resolve's result) and a newline.
// It is the streaming fast path: no allocation unless there are warnings.
func (wh *Whois) AppendJSON(dst, key []byte) []byte {
	h, fl := scanKey(key)
	r := wh.resolveHash(key, h)
	dst = append(dst, `{"key":`...)
	if fl&keyEscape == 0 {
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, '"')
	} else {
		dst = appendJSONString(dst, key)
		dst = render.AppendBase64Field(dst, "key", key) // a key that is not UTF-8, exactly
	}
	if wh.slotJSON != nil && !r.HasExplicit && r.Hash.Tier == grouphash.TierHash && fl == 0 && len(key) <= 246 {
		// The common case: the answer depends on the slot alone.
		dst = append(dst, wh.slotJSON[r.Hash.Slot]...)
		dst = appendHex8(dst, r.Hash.Hash)
		return append(dst, `","warnings":[]}`+"\n"...)
	}
	dst = wh.appendAnswer(dst, r)
	dst = appendHex8(dst, r.Hash.Hash)
	dst = append(dst, '"')
	if r.HasExplicit && r.ExplicitBroker != "" {
		dst = append(dst, `,"explicitBroker":`...)
		dst = appendJSONString(dst, r.ExplicitBroker)
	}
	if wh.Kind == KindTxn {
		dst = append(dst, `,"txnSlotFile":"slot-`...)
		dst = strconv.AppendInt(dst, int64(grouphash.TxnSlot(r.Hash.Hash)), 10)
		dst = append(dst, `.json"`...)
	}
	if wh.current != nil {
		var cur grouphash.Resolution
		if wh.Kind == KindTxn {
			cur = wh.current.TxnKey(key)
		} else {
			cur = wh.current.GroupKey(key)
		}
		dst = append(dst, `,"currentCoordinator":`...)
		dst = appendJSONString(dst, cur.Coordinator)
		dst = append(dst, `,"moves":`...)
		dst = strconv.AppendBool(dst, cur.Coordinator != r.Coordinator)
		if alt := wh.ifLastToConnect(r, cur.Coordinator); alt != nil {
			b, _ := json.Marshal(alt)
			dst = append(append(dst, `,"ifLastToConnect":`...), b...)
		}
	}
	dst = append(dst, `,"warnings":[`...)
	for i, w := range wh.warningsScanned(key, r, fl) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, w)
	}
	return append(dst, "]}\n"...)
}

// appendAnswer appends a resolution's fields from "kind" up to the opening
// quote of the hash value.
func (wh *Whois) appendAnswer(dst []byte, r grouphash.Resolution) []byte {
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, wh.Kind...)
	dst = append(dst, `","coordinator":`...)
	dst = appendJSONString(dst, r.Coordinator)
	dst = append(dst, `,"tier":"`...)
	dst = append(dst, r.Tier...)
	dst = append(dst, `","hashCoordinator":`...)
	dst = appendJSONString(dst, r.Hash.Coordinator)
	dst = append(dst, `,"hashTier":"`...)
	dst = append(dst, r.Hash.Tier...)
	dst = append(dst, `","preferred":`...)
	dst = appendJSONString(dst, r.Hash.Preferred)
	dst = append(dst, `,"slot":`...)
	dst = strconv.AppendInt(dst, int64(r.Hash.Slot), 10)
	return append(dst, wh.countsJSON...)
}

const hexDigits = "0123456789abcdef"

// plainJSON marks the bytes that go into a JSON string as they are.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func appendHex8(dst []byte, h uint32) []byte {
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(h>>uint(shift))&0xf])
	}
	return dst
}

// appendJSONString quotes s exactly as encoding/json does with HTML
// escaping off: control characters as \u00XX (or \n, \t, ...), invalid
// UTF-8 as \ufffd, and U+2028/U+2029 escaped.
func appendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.DecodeRuneInString(string(s))
}

// WhatIfMode reports whether answers compare a hypothetical broker set with
// today's.
func (wh *Whois) WhatIfMode() bool { return wh.current != nil }
