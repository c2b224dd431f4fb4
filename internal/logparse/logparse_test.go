package logparse

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/labdata"
)

func parseString(t *testing.T, s string, opt Options) ([]Event, Stats) {
	t.Helper()
	var evs []Event
	st, err := Parse(strings.NewReader(s), opt, func(e Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatal(err)
	}
	return evs, st
}

func TestFormats(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 7, 23, 11, 40, 2, 123456000, time.UTC)
	cases := []struct {
		name, line string
		want       Event
	}{
		{"rust json published",
			`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller active: assignment published","epoch":4,"version":57},"target":"kaas::cluster"}`,
			Event{Kind: AssignmentPublished, Format: FormatRustJSON, Epoch: 4, HasEpoch: true, Version: 57, HasVersion: true}},
		{"rust text published",
			`2026-07-23T11:40:02.123456Z  INFO kaas::cluster: controller active: assignment published epoch=4 version=57`,
			Event{Kind: AssignmentPublished, Format: FormatRustText, Epoch: 4, HasEpoch: true, Version: 57, HasVersion: true}},
		{"rust text ansi",
			"\x1b[2m2026-07-23T11:40:02.123456Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mkaas::cluster\x1b[0m\x1b[2m:\x1b[0m controller active: assignment published \x1b[3mepoch\x1b[0m\x1b[2m=\x1b[0m4 \x1b[3mversion\x1b[0m\x1b[2m=\x1b[0m57",
			Event{Kind: AssignmentPublished, Format: FormatRustText, Epoch: 4, HasEpoch: true, Version: 57, HasVersion: true}},
		{"rust json lease",
			`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller lease acquired","epoch":4,"identity":"kaas-1"},"target":"kaas_controller::kube_election"}`,
			Event{Kind: LeaseAcquired, Format: FormatRustJSON, Epoch: 4, HasEpoch: true, Identity: "kaas-1", Broker: "kaas-1"}},
		{"rust text broker set",
			`2026-07-23T11:40:02.123456Z  INFO kaas::cluster: controller: broker set changed prev={"kaas-0", "kaas-1", "kaas-2"} cur={"kaas-0", "kaas-2"}`,
			Event{Kind: BrokerSetChanged, Format: FormatRustText, Prev: []string{"kaas-0", "kaas-1", "kaas-2"}, Cur: []string{"kaas-0", "kaas-2"}, Removed: []string{"kaas-1"}, Added: []string{}}},
		{"rust json broker set debug strings",
			`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller: broker set changed","prev":"{\"kaas-0\"}","cur":"{\"kaas-0\", \"kaas-1\"}"},"target":"kaas::cluster"}`,
			Event{Kind: BrokerSetChanged, Format: FormatRustJSON, Prev: []string{"kaas-0"}, Cur: []string{"kaas-0", "kaas-1"}, Added: []string{"kaas-1"}, Removed: []string{}}},
		{"go json lease",
			`{"time":"2026-07-23T11:40:02.123456Z","level":"INFO","msg":"controller acquired lease","broker":"skafka-0","epoch":0}`,
			Event{Kind: LeaseAcquired, Format: FormatGoJSON, Epoch: 0, HasEpoch: true, Identity: "skafka-0", Broker: "skafka-0"}},
		{"go json broker set",
			`{"time":"2026-07-23T11:40:02.123456Z","level":"INFO","msg":"broker set changed; triggering recompute","added":null,"removed":["skafka-1"]}`,
			Event{Kind: BrokerSetChanged, Format: FormatGoJSON, Removed: []string{"skafka-1"}}},
		{"go text",
			`time=2026-07-23T11:40:02.123456Z level=INFO msg="broker set changed; triggering recompute" added="[skafka-3]" removed=[]`,
			Event{Kind: BrokerSetChanged, Format: FormatGoText, Added: []string{"skafka-3"}, Removed: []string{}}},
		{"coordinator change json",
			`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"group coordinator change","group":"orders","from":"kaas-1","to":"kaas-0","assignment_version":58,"side":"gained"},"target":"kaas_broker::group_takeover"}`,
			Event{Kind: CoordinatorChange, Format: FormatRustJSON, Group: "orders", From: "kaas-1", To: "kaas-0", Side: "gained", Version: 58, HasVersion: true}},
		{"coordinator change text quoted",
			`2026-07-23T11:40:02.123456Z  INFO kaas_broker::group_takeover: group coordinator change group="a b" from=kaas-1 to=kaas-0 assignment_version=58 side=lost`,
			Event{Kind: CoordinatorChange, Format: FormatRustText, Group: "a b", From: "kaas-1", To: "kaas-0", Side: "lost", Version: 58, HasVersion: true}},
		{"kubectl prefix+timestamps",
			`[pod/kaas-2/kaas] 2026-07-23T11:40:02.123456789Z {"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller recompute","reason":"broker_dead","assignment_version":58},"target":"kaas_controller::assignment_writer"}`,
			Event{Kind: Recompute, Format: FormatRustJSON, Broker: "kaas-2", Reason: "broker_dead", Version: 58, HasVersion: true}},
		{"broker token pipe",
			`kaas-1  | 2026-07-23T11:40:02.123456Z  WARN kaas_controller::kube_election: controller lease lost to another holder identity=kaas-1`,
			Event{Kind: LeaseLost, Format: FormatRustText, Broker: "kaas-1", Identity: "kaas-1"}},
		{"stale epoch",
			`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"WARN","fields":{"message":"assignment.json rejected — stale controller epoch","file_epoch":3,"lease_epoch":4},"target":"kaas_broker::coordinator"}`,
			Event{Kind: StaleAssignment, Format: FormatRustJSON, Epoch: 3, HasEpoch: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, st := parseString(t, c.line+"\n", Options{Source: "x.log"})
			if len(evs) != 1 {
				t.Fatalf("%d events, stats %+v", len(evs), st)
			}
			e := evs[0]
			if !e.Time.Equal(ts) && c.name != "kubectl prefix+timestamps" {
				t.Errorf("time %v", e.Time)
			}
			if e.Kind != c.want.Kind || e.Format != c.want.Format || e.Epoch != c.want.Epoch || e.HasEpoch != c.want.HasEpoch ||
				e.Version != c.want.Version || e.HasVersion != c.want.HasVersion || e.Identity != c.want.Identity ||
				e.Group != c.want.Group || e.From != c.want.From || e.To != c.want.To || e.Side != c.want.Side || e.Reason != c.want.Reason {
				t.Errorf("got %+v\nwant %+v", e, c.want)
			}
			if c.want.Broker != "" && e.Broker != c.want.Broker {
				t.Errorf("broker %q, want %q", e.Broker, c.want.Broker)
			}
			for _, p := range []struct{ got, want []string }{{e.Added, c.want.Added}, {e.Removed, c.want.Removed}, {e.Prev, c.want.Prev}, {e.Cur, c.want.Cur}} {
				if !slices.Equal(p.got, p.want) || (p.want != nil && p.got == nil) {
					t.Errorf("list %q, want %q", p.got, p.want)
				}
			}
			if e.Line != 1 || e.Source != "x.log" {
				t.Errorf("position %s:%d", e.Source, e.Line)
			}
		})
	}
}

func TestBrokerAttribution(t *testing.T) {
	t.Parallel()
	line := `{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller active: assignment published","epoch":4,"version":57},"target":"kaas::cluster"}`
	// File name beats --broker; prefix beats the file name.
	evs, _ := parseString(t, line+"\n", Options{Source: "logs/broker-skafka-0.log", Broker: "flag-9"})
	if evs[0].Broker != "skafka-0" {
		t.Errorf("file name: %q", evs[0].Broker)
	}
	evs, _ = parseString(t, "[pod/kaas-3/kaas] "+line+"\n", Options{Source: "kaas-1.log.gz", Broker: "flag-9"})
	if evs[0].Broker != "kaas-3" {
		t.Errorf("prefix: %q", evs[0].Broker)
	}
	evs, _ = parseString(t, line+"\n", Options{Source: "-", Broker: "kaas-7"})
	if evs[0].Broker != "kaas-7" {
		t.Errorf("flag: %q", evs[0].Broker)
	}
	for name, want := range map[string]string{"broker-skafka-0.log": "skafka-0", "kaas-1.log": "kaas-1", "/x/kaas-12.log.gz": "kaas-12", "app.log": "", "kaas-2-previous.txt": "kaas-2"} {
		if got := BrokerFromFileName(name); got != want {
			t.Errorf("BrokerFromFileName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestGarbage(t *testing.T) {
	t.Parallel()
	good := `{"time":"2026-11-29T09:08:35.702696559Z","level":"INFO","msg":"broker set changed; triggering recompute","added":null,"removed":["skafka-1"]}`
	var b strings.Builder
	b.WriteString("\x00\x01\x02 binary controller \xff\xfe\n")
	b.WriteString(`{"time":"2026-11-29T09:08:35Z","level":"INFO","msg":"controller acquired lease","bro` + "\n") // truncated
	b.WriteString(strings.Repeat("x", 1<<20) + " controller\n")                                                  // 1 MB line
	b.WriteString(good + "\n")
	b.WriteString("random words about a controller that is not ours\n")
	b.WriteString(strings.Repeat("y", MaxLine+10) + "\n") // overlong
	b.WriteString(good)                                   // no final newline
	evs, st := parseString(t, b.String(), Options{Source: "junk.log"})
	if len(evs) != 2 {
		t.Fatalf("%d events, stats %+v", len(evs), st)
	}
	if evs[0].Line != 4 || evs[1].Line != 7 {
		t.Errorf("lines %d %d", evs[0].Line, evs[1].Line)
	}
	if st.Lines != 7 || st.Overlong != 1 || st.Binary != 1 || st.Unparsed != 1 {
		t.Errorf("stats %+v", st)
	}
	// Unknown format reported.
	_, st = parseString(t, "hello\nworld\n", Options{Source: "notes.txt"})
	if len(st.UnknownFormat) != 1 {
		t.Errorf("unknown format not reported: %+v", st)
	}
}

func TestGzipAndMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := `{"time":"2026-11-29T09:08:03Z","level":"INFO","msg":"broker set changed; triggering recompute","added":["skafka-1"],"removed":null}` + "\n" +
		`{"time":"2026-11-29T09:08:35Z","level":"INFO","msg":"broker set changed; triggering recompute","added":null,"removed":["skafka-1"]}` + "\n"
	bl := `2026-11-29T09:08:10Z  INFO kaas::cluster: controller active: assignment published epoch=1 version=2` + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(bl))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "kaas-0.log"), []byte(a), 0o644)
	os.WriteFile(filepath.Join(dir, "kaas-1.log.gz"), gz.Bytes(), 0o644)
	evs, st, errs := ParseAll([]Input{{Path: filepath.Join(dir, "kaas-0.log")}, {Path: filepath.Join(dir, "kaas-1.log.gz")}, {Path: filepath.Join(dir, "missing.log")},
		{Path: "-", R: strings.NewReader(`2026-11-29T09:08:20Z  INFO kaas::cluster: controller: broker set changed prev={"kaas-0"} cur={"kaas-0", "kaas-1"}` + "\n")}}, Options{Broker: "kaas-9"})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "missing.log") {
		t.Errorf("errors %v", errs)
	}
	if len(evs) != 4 || st.Files != 3 {
		t.Fatalf("%d events, %+v", len(evs), st)
	}
	var order []string
	for _, e := range evs {
		order = append(order, e.Time.Format("15:04:05")+" "+e.Broker)
	}
	want := []string{"09:08:03 kaas-0", "09:08:10 kaas-1", "09:08:20 kaas-9", "09:08:35 kaas-0"}
	if !slices.Equal(order, want) {
		t.Errorf("merged %v, want %v", order, want)
	}
}

func TestLabLogs(t *testing.T) {
	t.Parallel()
	dir, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for _, n := range []string{"broker-skafka-0.log", "broker-skafka-1.log", "broker-skafka-2.log"} {
		ins = append(ins, Input{Path: filepath.Join(dir, "logs", n)})
	}
	evs, st, errs := ParseAll(ins, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events %+v: %+v", len(evs), st, evs)
	}
	if evs[0].Kind != LeaseAcquired || evs[0].Broker != "skafka-0" || !evs[0].HasEpoch {
		t.Errorf("lease: %+v", evs[0])
	}
	if evs[1].Kind != BrokerSetChanged || !slices.Equal(evs[1].Added, []string{"skafka-1", "skafka-2"}) {
		t.Errorf("join: %+v", evs[1])
	}
	if evs[2].Kind != BrokerSetChanged || !slices.Equal(evs[2].Removed, []string{"skafka-1"}) || evs[2].Line != 11 {
		t.Errorf("leave: %+v", evs[2])
	}
	if st.Lines != 31 || len(st.UnknownFormat) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":"2026-07-23T11:40:02.123456Z","level":"INFO","fields":{"message":"controller active: assignment published","epoch":4,"version":57},"target":"kaas::cluster"}`,
		`2026-07-23T11:40:02.123456Z  INFO kaas::cluster: controller: broker set changed prev={"kaas-0", "kaas-1"} cur={"kaas-0"}`,
		`[pod/kaas-2/kaas] 2026-07-23T11:40:02Z {"time":"2026-11-29T09:08:35Z","msg":"broker set changed; triggering recompute","added":null}`,
		`kaas-1 | time=2026-07-23T11:40:02Z level=INFO msg="group coordinator change" group="x" from=a to=b side=gained`,
		"\x1b[2m2026-07-23T11:40:02Z\x1b[0m INFO x: group coordinator change group={\"a",
		`{"fields":{"message":"controller lease acquired","epoch":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parseLine(b)
		looksKnown(b)
		parseLogfmt(b)
		strList(string(b))
	})
}

func FuzzParseStream(f *testing.F) {
	f.Add([]byte("{\"time\":\"2026-11-29T09:08:35Z\",\"msg\":\"controller acquired lease\"}\ncontroller\n\x1f\x8b"))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	f.Add([]byte("set changed\r\ncoordinator change controller"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		st, _ := Parse(bytes.NewReader(b), Options{Source: "fuzz.log"}, func(Event) { n++ })
		if int64(n) != st.Events {
			t.Fatalf("emitted %d, counted %d", n, st.Events)
		}
	})
}

func genLog(size int) []byte {
	var b bytes.Buffer
	if err := Synthesize(&b, int64(size)); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// BenchmarkParse100MB parses ~100 MB of generated logs; compare MB/s with
// a plain byte count over the same buffer (BenchmarkCountLines100MB).
func BenchmarkParse100MB(b *testing.B) {
	data := genLog(100 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var st Stats
	for i := 0; i < b.N; i++ {
		st, _ = Parse(bytes.NewReader(data), Options{Source: "kaas-0.log"}, func(Event) {})
	}
	b.ReportMetric(float64(st.Events), "events")
	b.ReportMetric(float64(st.Candidates), "candidates")
}

// BenchmarkCountLines100MB is the floor: counting newlines, like grep -c
// without a pattern, over the same bytes.
func BenchmarkCountLines100MB(b *testing.B) {
	data := genLog(100 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n = bytes.Count(data, []byte{'\n'})
	}
	b.ReportMetric(float64(n), "lines")
}

// naiveCandidates lists the start of every line holding an anchor.
func naiveCandidates(d []byte) []int {
	var out []int
	s := 0
	for s <= len(d) {
		e := bytes.IndexByte(d[s:], '\n')
		if e < 0 {
			e = len(d)
		} else {
			e += s
		}
		for _, a := range anchors {
			if bytes.Contains(d[s:e], a) {
				out = append(out, s)
				break
			}
		}
		s = e + 1
	}
	return out
}

func scanCandidates(d []byte) []int {
	var out []int
	for off := 0; off < len(d); {
		s, e, ok := nextCandidate(d, off)
		if !ok {
			break
		}
		out = append(out, s)
		off = e
	}
	return out
}

// TestCandidateScanFindsEveryAnchor checks the skipping scan against a
// naive one, with anchors planted at every offset and line length.
func TestCandidateScanFindsEveryAnchor(t *testing.T) {
	t.Parallel()
	filler := []byte(`{"fields":{"message":"produce request handled; ordered controll contro set change coordinator chang"}} `)
	for _, a := range anchors {
		for pre := 0; pre < 40; pre++ {
			for post := 0; post < 12; post++ {
				var b bytes.Buffer
				b.Write(filler[:pre])
				b.Write(a)
				b.Write(filler[:post])
				b.WriteByte('\n')
				b.Write(filler)
				b.WriteByte('\n')
				b.Write(filler[:post])
				b.Write(a)
				d := b.Bytes()
				if got, want := scanCandidates(d), naiveCandidates(d); !slices.Equal(got, want) {
					t.Fatalf("anchor %q pre %d post %d: got %v want %v", a, pre, post, got, want)
				}
			}
		}
	}
	d := genLog(4 << 20)
	if got, want := scanCandidates(d), naiveCandidates(d); !slices.Equal(got, want) {
		t.Fatalf("generated log: %d candidates, naive %d", len(got), len(want))
	}
}

func FuzzCandidateScan(f *testing.F) {
	f.Add([]byte("xx controller yy\nset changed\n\ncoordinator change"))
	f.Add([]byte("contrcontroller"))
	f.Fuzz(func(t *testing.T, d []byte) {
		if got, want := scanCandidates(d), naiveCandidates(d); !slices.Equal(got, want) {
			t.Fatalf("got %v want %v", got, want)
		}
	})
}
