// Package grouphash is kaas's coordinator routing, as pure functions: the
// FNV-1a 32 hash, the slot, the two-tier pick (explicit entry, then hash with
// its fallback over the alive brokers) and the transaction slot file.
//
// Every other package that needs "who coordinates this key" calls this one;
// nothing here does I/O.
package grouphash

import (
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// FNV-1a 32 parameters, as kaas uses them.
const (
	offsetBasis uint32 = 0x811c9dc5
	prime       uint32 = 0x01000193
)

// TxnSlots is the fixed number of transaction slot files kaas keeps
// (txn_state/slot-0.json … slot-49.json). It never changes.
const TxnSlots = 50

// HealthAlive is the only health value that counts as up; "draining" and
// "dead" (and anything unknown) count as down.
const HealthAlive = "alive"

// Tier names how a coordinator was chosen.
type Tier string

const (
	TierExplicit     Tier = "explicit"      // a consumerGroups[] entry names the broker
	TierHash         Tier = "hash"          // the broker at the hash slot is alive
	TierHashFallback Tier = "hash-fallback" // the slot's broker is down; picked among the alive
	TierNone         Tier = "none"          // no broker can coordinate (COORDINATOR_NOT_AVAILABLE)
)

// FNV1a32 hashes the UTF-8 bytes of s.
func FNV1a32(s string) uint32 {
	h := offsetBasis
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= prime
	}
	return h
}

// FNV1a32Bytes hashes b without converting it to a string.
func FNV1a32Bytes(b []byte) uint32 {
	h := offsetBasis
	for _, c := range b {
		h ^= uint32(c)
		h *= prime
	}
	return h
}

// TxnSlot is the slot number of a transactional id.
func TxnSlot(h uint32) int { return int(uint64(h) % TxnSlots) }

// TxnSlotFile is the slot file name kaas uses for a transactional id:
// "slot-<n>.json", no zero padding.
func TxnSlotFile(txnID string) string {
	return "slot-" + strconv.Itoa(TxnSlot(FNV1a32(txnID))) + ".json"
}

// Broker is one entry of assignment.json's brokers[].
type Broker struct {
	ID     string
	Health string
}

// Entry is one explicit consumerGroups[] entry.
type Entry struct {
	GroupID string
	Broker  string
}

// Ring is the hash tier over one broker set: ids sorted lexicographically
// (so "kaas-10" < "kaas-2"), with the alive subset precomputed. A Ring is
// immutable and safe for concurrent use.
type Ring struct {
	ids   []string
	alive []bool
	live  []string
}

// NewRing builds the hash tier. Input order never matters. A broker id that
// is listed twice is kept twice, exactly as kaas sorts and counts it.
func NewRing(brokers []Broker) *Ring {
	bs := slices.Clone(brokers)
	slices.SortStableFunc(bs, func(a, b Broker) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		// Same id listed twice: order by health so the result does not
		// depend on input order.
		switch {
		case a.Health < b.Health:
			return -1
		case a.Health > b.Health:
			return 1
		}
		return 0
	})
	r := &Ring{ids: make([]string, len(bs)), alive: make([]bool, len(bs))}
	for i, b := range bs {
		r.ids[i] = b.ID
		r.alive[i] = b.Health == HealthAlive
		if r.alive[i] {
			r.live = append(r.live, b.ID)
		}
	}
	return r
}

// Len is the divisor of the hash tier: every listed broker, any health.
func (r *Ring) Len() int { return len(r.ids) }

// AliveCount is the number of brokers with health "alive".
func (r *Ring) AliveCount() int { return len(r.live) }

// IDs returns the sorted broker ids (shared; do not modify).
func (r *Ring) IDs() []string { return r.ids }

// Alive reports whether id is listed with health "alive".
// The ids are sorted: a binary search, as a million explicit entries over
// a thousand brokers each ask.
func (r *Ring) Alive(id string) bool {
	i, _ := slices.BinarySearch(r.ids, id)
	for ; i < len(r.ids) && r.ids[i] == id; i++ {
		if r.alive[i] {
			return true
		}
	}
	return false
}

// Listed reports whether id appears in the broker list at all.
func (r *Ring) Listed(id string) bool {
	_, found := slices.BinarySearch(r.ids, id)
	return found
}

// HashPick is the hash tier's answer for one key.
type HashPick struct {
	Hash        uint32
	Slot        int    // hash % Len(); -1 when there are no brokers
	Preferred   string // ids[slot], whatever its health; "" when there are no brokers
	Coordinator string // "" when no broker is alive
	Tier        Tier   // hash, hash-fallback or none
}

// PickHash runs the hash tier for a precomputed hash.
func (r *Ring) PickHash(h uint32) HashPick {
	p := HashPick{Hash: h, Slot: -1, Tier: TierNone}
	n := len(r.ids)
	if n == 0 {
		return p
	}
	slot := int(uint64(h) % uint64(n))
	p.Slot = slot
	p.Preferred = r.ids[slot]
	if r.alive[slot] {
		p.Coordinator = p.Preferred
		p.Tier = TierHash
		return p
	}
	if len(r.live) == 0 {
		return p
	}
	p.Coordinator = r.live[slot%len(r.live)]
	p.Tier = TierHashFallback
	return p
}

// Pick runs the hash tier for a key.
func (r *Ring) Pick(key string) HashPick { return r.PickHash(FNV1a32(key)) }

// Router is both tiers: explicit consumerGroups[] entries over the hash ring.
type Router struct {
	ring     *Ring
	explicit map[string]string // first entry per group wins
}

// NewRouter builds the two-tier router. For a group listed more than once,
// the first entry wins, as in kaas.
func NewRouter(brokers []Broker, entries []Entry) *Router {
	rt := &Router{ring: NewRing(brokers), explicit: make(map[string]string, len(entries))}
	for _, e := range entries {
		if _, dup := rt.explicit[e.GroupID]; !dup {
			rt.explicit[e.GroupID] = e.Broker
		}
	}
	return rt
}

// Ring returns the router's hash tier.
func (rt *Router) Ring() *Ring { return rt.ring }

// Resolution is the full answer for one key.
type Resolution struct {
	Coordinator    string   // the final answer; "" when none
	Tier           Tier     // how Coordinator was chosen
	Hash           HashPick // what the hash tier alone says
	HasExplicit    bool
	ExplicitBroker string // the winning explicit entry's broker, when HasExplicit
}

// Group resolves a consumer group through both tiers. The explicit entry
// wins unconditionally, even when it names a dead or absent broker.
func (rt *Router) Group(group string) Resolution {
	return rt.resolve(group, FNV1a32(group), true)
}

// GroupHash is Group for a precomputed hash of the same key.
func (rt *Router) GroupHash(group string, h uint32) Resolution {
	return rt.resolve(group, h, true)
}

// Txn resolves a transactional id: hash tier only.
func (rt *Router) Txn(txnID string) Resolution {
	return rt.resolve(txnID, FNV1a32(txnID), false)
}

// TxnHash is Txn for a precomputed hash of the same key.
func (rt *Router) TxnHash(txnID string, h uint32) Resolution {
	return rt.resolve(txnID, h, false)
}

func (rt *Router) resolve(key string, h uint32, groups bool) Resolution {
	hp := rt.ring.PickHash(h)
	res := Resolution{Coordinator: hp.Coordinator, Tier: hp.Tier, Hash: hp}
	if groups {
		if b, ok := rt.explicit[key]; ok {
			res.HasExplicit = true
			res.ExplicitBroker = b
			res.Coordinator = b
			res.Tier = TierExplicit
		}
	}
	return res
}

// ResolveGroup resolves a group whose winning explicit entry the caller
// already holds (hasEntry, broker): the same answer as a Router built with
// that entry, without a map of every entry.
func (r *Ring) ResolveGroup(group string, hasEntry bool, broker string) Resolution {
	hp := r.PickHash(FNV1a32(group))
	res := Resolution{Coordinator: hp.Coordinator, Tier: hp.Tier, Hash: hp}
	if hasEntry {
		res.HasExplicit, res.ExplicitBroker, res.Coordinator, res.Tier = true, broker, broker, TierExplicit
	}
	return res
}

// GroupKey is Group for a key held in a byte slice; it does not allocate,
// which keeps streaming millions of keys cheap.
func (rt *Router) GroupKey(key []byte) Resolution {
	return rt.GroupKeyHash(key, FNV1a32Bytes(key))
}

// GroupKeyHash is GroupKey with the key's hash already computed.
func (rt *Router) GroupKeyHash(key []byte, h uint32) Resolution {
	hp := rt.ring.PickHash(h)
	res := Resolution{Coordinator: hp.Coordinator, Tier: hp.Tier, Hash: hp}
	if b, ok := rt.explicit[string(key)]; ok {
		res.HasExplicit, res.ExplicitBroker, res.Coordinator, res.Tier = true, b, b, TierExplicit
	}
	return res
}

// TxnKey is Txn for a key held in a byte slice.
func (rt *Router) TxnKey(key []byte) Resolution {
	hp := rt.ring.PickHash(FNV1a32Bytes(key))
	return Resolution{Coordinator: hp.Coordinator, Tier: hp.Tier, Hash: hp}
}

// Rendezvous is where kaas's controller places a new explicit entry for an
// active group: the broker with the highest XXH64 (seed 0) of
// groupID 0x00 brokerID over the alive brokers (sorted; ties go to the
// earlier one). It is a different hash from the routing tier's, so a group's
// first entry often moves it. "" when no broker is alive.
func Rendezvous(groupID string, alive []string) string {
	best, bestH := "", uint64(0)
	buf := make([]byte, 0, len(groupID)+16)
	for i, b := range alive {
		buf = append(append(append(buf[:0], groupID...), 0), b...)
		h := xxhash.Sum64(buf)
		if i == 0 || h > bestH {
			best, bestH = b, h
		}
	}
	return best
}
