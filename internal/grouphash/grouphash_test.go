package grouphash

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

type vector struct {
	Key         string   `json:"key"`
	Brokers     []Broker `json:"brokers"`
	FNV         string   `json:"fnv1a32"`
	Slot        int      `json:"slot"`
	Preferred   string   `json:"preferred"`
	Coordinator string   `json:"coordinator"`
	TxnSlotFile string   `json:"txnSlotFile"`
}

// vectorsPath finds the shared routing oracle; the checked-in copy in
// testdata keeps the test working where ../shared is absent.
func vectorsPath(t *testing.T) string {
	for _, p := range []string{
		"../../../shared/testdata/routing/vectors.jsonl",
		"../../testdata/routing/vectors.jsonl",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("routing vectors not found")
	return ""
}

func TestRoutingVectors(t *testing.T) {
	t.Parallel()
	f, err := os.Open(vectorsPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		h := FNV1a32(v.Key)
		if got := fmt.Sprintf("0x%08x", h); got != v.FNV {
			t.Errorf("line %d %q: fnv %s, want %s", n, v.Key, got, v.FNV)
		}
		rt := NewRouter(v.Brokers, nil)
		g := rt.Group(v.Key)
		if g.Hash.Slot != v.Slot || g.Hash.Preferred != v.Preferred || g.Coordinator != v.Coordinator {
			t.Errorf("line %d %q: slot %d preferred %q coordinator %q, want %d %q %q",
				n, v.Key, g.Hash.Slot, g.Hash.Preferred, g.Coordinator, v.Slot, v.Preferred, v.Coordinator)
		}
		if tx := rt.Txn(v.Key); tx.Coordinator != v.Coordinator {
			t.Errorf("line %d %q: txn coordinator %q, want %q", n, v.Key, tx.Coordinator, v.Coordinator)
		}
		if got := TxnSlotFile(v.Key); got != v.TxnSlotFile {
			t.Errorf("line %d %q: txn slot file %s, want %s", n, v.Key, got, v.TxnSlotFile)
		}
		if FNV1a32Bytes([]byte(v.Key)) != h {
			t.Errorf("line %d: byte and string hashes differ", n)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("only %d vectors read", n)
	}
}

func TestVectorsCopyMatchesShared(t *testing.T) {
	t.Parallel()
	shared := "../../../shared/testdata/routing/vectors.jsonl"
	a, err := os.ReadFile(shared)
	if err != nil {
		t.Skip("shared vectors not present")
	}
	b, err := os.ReadFile(filepath.FromSlash("../../testdata/routing/vectors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("testdata/routing/vectors.jsonl is out of date: copy ../shared/testdata/routing/vectors.jsonl")
	}
}

func TestKnownHashes(t *testing.T) {
	t.Parallel()
	for k, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968, "g1": 0x10202895} {
		if got := FNV1a32(k); got != want {
			t.Errorf("FNV1a32(%q) = %#x, want %#x", k, got, want)
		}
	}
	for k, want := range map[string]string{"tx-commit": "slot-9.json", "tx-ongoing": "slot-25.json", "tx-bare": "slot-40.json", "tx-abort": "slot-48.json", "payments-tx-0": "slot-32.json"} {
		if got := TxnSlotFile(k); got != want {
			t.Errorf("TxnSlotFile(%q) = %s, want %s", k, got, want)
		}
	}
}

func TestLexicographicOrder(t *testing.T) {
	t.Parallel()
	var bs []Broker
	for i := 0; i < 11; i++ {
		bs = append(bs, Broker{ID: fmt.Sprintf("kaas-%d", i), Health: HealthAlive})
	}
	rt := NewRouter(bs, nil)
	if got := rt.Group("g1").Coordinator; got != "kaas-9" {
		t.Errorf("g1 -> %s, want kaas-9 (slot 10 of a lexicographic sort)", got)
	}
	if got := rt.Group("billing").Coordinator; got != "kaas-10" {
		t.Errorf("billing -> %s, want kaas-10", got)
	}
}

func TestExplicitTier(t *testing.T) {
	t.Parallel()
	bs := []Broker{{"kaas-0", "alive"}, {"kaas-1", "alive"}, {"kaas-2", "dead"}}
	rt := NewRouter(bs, []Entry{{"orders", "kaas-2"}, {"orders", "kaas-0"}, {"ghost", "kaas-7"}})
	r := rt.Group("orders")
	if r.Tier != TierExplicit || r.Coordinator != "kaas-2" || r.ExplicitBroker != "kaas-2" {
		t.Errorf("first entry must win even on a dead broker: %+v", r)
	}
	if r.Hash.Coordinator == "" || r.Hash.Coordinator == "kaas-2" {
		t.Errorf("hash tier must skip the dead broker: %+v", r.Hash)
	}
	if g := rt.Group("ghost"); g.Coordinator != "kaas-7" || g.Tier != TierExplicit {
		t.Errorf("entry naming an absent broker still wins: %+v", g)
	}
	if tx := rt.Txn("orders"); tx.Tier == TierExplicit {
		t.Errorf("transactional ids ignore explicit entries: %+v", tx)
	}
}

func TestNoBrokers(t *testing.T) {
	t.Parallel()
	r := NewRouter(nil, nil).Group("x")
	if r.Tier != TierNone || r.Coordinator != "" || r.Hash.Slot != -1 {
		t.Errorf("empty broker list: %+v", r)
	}
	r = NewRouter([]Broker{{"kaas-0", "dead"}, {"kaas-1", "draining"}}, nil).Group("x")
	if r.Tier != TierNone || r.Coordinator != "" || r.Hash.Preferred == "" {
		t.Errorf("no alive broker: %+v", r)
	}
}

func TestRendezvous(t *testing.T) {
	t.Parallel()
	alive := []string{"kaas-0", "kaas-1", "kaas-10", "kaas-2"}
	if Rendezvous("g", nil) != "" {
		t.Error("no alive broker must give no placement")
	}
	moved := 0
	counts := map[string]int{}
	for i := 0; i < 500; i++ {
		g := fmt.Sprintf("group-%d", i)
		b := Rendezvous(g, alive)
		counts[b]++
		// Removing a broker other than the winner never moves the group.
		for _, gone := range alive {
			if gone == b {
				continue
			}
			var rest []string
			for _, x := range alive {
				if x != gone {
					rest = append(rest, x)
				}
			}
			if Rendezvous(g, rest) != b {
				t.Fatalf("%s moved from %s when %s left", g, b, gone)
			}
		}
		if b != NewRouter([]Broker{{"kaas-0", "alive"}, {"kaas-1", "alive"}, {"kaas-10", "alive"}, {"kaas-2", "alive"}}, nil).Group(g).Coordinator {
			moved++
		}
	}
	for _, id := range alive {
		if counts[id] < 80 {
			t.Errorf("rendezvous spread %v is lopsided", counts)
		}
	}
	// A different hash from the routing tier: most first entries move the group.
	if moved < 250 {
		t.Errorf("rendezvous agreed with the routing hash for %d of 500 groups; expected about 3 in 4 to differ", 500-moved)
	}
}
