package grouphash

import (
	"slices"
	"strings"
	"testing"
)

// decodeBrokers turns fuzz bytes into a broker list: ids separated by ',',
// a trailing '!' marks a dead broker, '~' a draining one.
func decodeBrokers(spec string) []Broker {
	var bs []Broker
	for _, f := range strings.Split(spec, ",") {
		if f == "" {
			continue
		}
		h := HealthAlive
		switch {
		case strings.HasSuffix(f, "!"):
			h, f = "dead", strings.TrimSuffix(f, "!")
		case strings.HasSuffix(f, "~"):
			h, f = "draining", strings.TrimSuffix(f, "~")
		}
		bs = append(bs, Broker{ID: f, Health: h})
	}
	return bs
}

func FuzzRouting(f *testing.F) {
	f.Add("orders-app", "kaas-0,kaas-1,kaas-2", "", "")
	f.Add("g1", "kaas-0,kaas-1,kaas-2,kaas-3,kaas-4,kaas-5,kaas-6,kaas-7,kaas-8,kaas-9,kaas-10", "", "")
	f.Add("billing", "kaas-2!,kaas-10,kaas-1~", "billing", "kaas-9")
	f.Add("", "", "", "")
	f.Add("x\x00y", "skafka-0!,skafka-1!", "x\x00y", "skafka-1")
	f.Fuzz(func(t *testing.T, key, spec, entryGroup, entryBroker string) {
		bs := decodeBrokers(spec)
		var entries []Entry
		if entryGroup != "" {
			entries = []Entry{{GroupID: entryGroup, Broker: entryBroker}}
		}
		rt := NewRouter(bs, entries)
		r := rt.Group(key)

		// The answer is an alive broker, the explicit entry, or nothing.
		switch r.Tier {
		case TierExplicit:
			if key != entryGroup || r.Coordinator != entryBroker {
				t.Fatalf("explicit tier without a matching entry: %+v", r)
			}
		case TierHash, TierHashFallback:
			if !rt.Ring().Alive(r.Coordinator) {
				t.Fatalf("hash tier picked a broker that is not alive: %+v", r)
			}
		case TierNone:
			if r.Coordinator != "" || rt.Ring().AliveCount() != 0 {
				t.Fatalf("tier none with alive brokers or a coordinator: %+v", r)
			}
		default:
			t.Fatalf("unknown tier %q", r.Tier)
		}

		// Input order of brokers never matters.
		rev := slices.Clone(bs)
		slices.Reverse(rev)
		if r2 := NewRouter(rev, entries).Group(key); r2 != r {
			t.Fatalf("order changed the answer: %+v vs %+v", r, r2)
		}

		// The divisor uses a lexicographic sort of every listed id.
		ids := make([]string, len(bs))
		for i, b := range bs {
			ids[i] = b.ID
		}
		slices.Sort(ids)
		if len(ids) > 0 {
			want := ids[int(uint64(FNV1a32(key))%uint64(len(ids)))]
			if r.Hash.Preferred != want {
				t.Fatalf("preferred %q, want %q from lexicographic order %v", r.Hash.Preferred, want, ids)
			}
		}
	})
}
