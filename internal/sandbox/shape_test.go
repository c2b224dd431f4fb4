package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestAssignmentFileShape(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2026, 7, 23, 11, 40, 2, 120000000, time.UTC)
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 3}}, Now: func() time.Time { return fixed }})
	raw, err := os.ReadFile(sb.Layout().AssignmentPath())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"controllerEpoch":1,"assignmentVersion":1,"generatedAt":"2026-07-23T11:40:02.120000000Z","controller":"kaas-0",` +
		`"brokers":[{"id":"kaas-0","health":"alive","lastSeen":"2026-07-23T11:40:02.120000000Z"},{"id":"kaas-1","health":"alive","lastSeen":"2026-07-23T11:40:02.120000000Z"}],` +
		`"partitions":[{"topic":"orders","partition":0,"broker":"kaas-0","epoch":1,"role":"leader"},{"topic":"orders","partition":1,"broker":"kaas-1","epoch":1,"role":"leader"},{"topic":"orders","partition":2,"broker":"kaas-0","epoch":1,"role":"leader"}]}`
	if string(raw) != want {
		t.Fatalf("assignment.json =\n%s\nwant\n%s", raw, want)
	}
	if _, err := os.Stat(sb.Layout().AssignmentPath() + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("tmp file left behind: %v", err)
	}
	// Only __cluster, topic dirs and dot-entries at the data-dir root.
	ents, _ := os.ReadDir(sb.Layout().DataDir)
	for _, e := range ents {
		if n := e.Name(); n != "__cluster" && n != "orders" && !strings.HasPrefix(n, ".") {
			t.Errorf("unexpected entry at the data-dir root (kaas's operator would delete it): %s", n)
		}
	}
}

func TestTimestampsHaveNineDigits(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 1})
	a := sb.Assignment()
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)
	if !re.MatchString(a.GeneratedAt) || !re.MatchString(a.Brokers[0].LastSeen) {
		t.Fatalf("timestamps %q / %q are not RFC 3339 with 9 digits and Z", a.GeneratedAt, a.Brokers[0].LastSeen)
	}
}

func TestManifestsFollowTheLog(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 2}}, PollInterval: 20 * time.Millisecond})
	// With the kaas-manifests quirk on (the default) a manifest is written
	// when the partition is opened and then trails the log: whether it
	// showed 6 depended on the first poll coming after the produce (on a
	// loaded machine it came before, and the manifest stayed at 0). Off,
	// it follows the log end at every poll.
	sb.EmulateKaasManifests(false)
	prod := newClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 2, 6)
	p := filepath.Join(sb.Layout().DataDir, "orders", "1", "manifest.json")
	var m manifest
	sb.WaitFor(t, "orders/1 manifest at highWatermark 6", 60*time.Second, func() bool {
		data, err := os.ReadFile(p)
		return err == nil && json.Unmarshal(data, &m) == nil && m.HighWatermark == 6
	})
	data, _ := os.ReadFile(p)
	if string(data) != `{"epoch":1,"highWatermark":6,"logStartOffset":0}` {
		t.Fatalf("manifest = %s", data)
	}
}

func TestLogsAreKaasTracingJSON(t *testing.T) {
	t.Parallel()
	sb := Start(t, Options{Brokers: 3, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	commitGroups(t, sb, "orders", groupNames(10)...)
	if _, err := sb.StopBroker("kaas-2"); err != nil {
		t.Fatal(err)
	}
	ts := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
	lines := 0
	for _, id := range sb.BrokerIDs() {
		data, err := os.ReadFile(filepath.Join(sb.LogDir(), id+".log"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			lines++
			var l struct {
				Timestamp string         `json:"timestamp"`
				Level     string         `json:"level"`
				Fields    map[string]any `json:"fields"`
				Target    string         `json:"target"`
			}
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("%s: %v: %s", id, err, sc.Text())
			}
			if !ts.MatchString(l.Timestamp) || l.Level == "" || l.Target == "" || l.Fields["message"] == nil {
				t.Fatalf("%s: line not in kaas's tracing shape: %s", id, sc.Text())
			}
			if !strings.HasPrefix(sc.Text(), `{"timestamp":`) || !strings.Contains(sc.Text(), `"fields":{"message":`) {
				t.Fatalf("%s: key order differs from tracing-subscriber's: %s", id, sc.Text())
			}
		}
	}
	if lines < 6 {
		t.Fatalf("only %d log lines", lines)
	}
	l0 := readLog(t, sb, "kaas-0")
	for _, want := range []string{
		`"message":"controller lease acquired","epoch":1,"identity":"kaas-0"},"target":"kaas_controller::kube_election"`,
		`"message":"controller active: assignment published","epoch":1,"version":1},"target":"kaas::cluster"`,
	} {
		if !strings.Contains(l0, want) {
			t.Errorf("kaas-0 log lacks %s", want)
		}
	}
}

func TestDebugSet(t *testing.T) {
	t.Parallel()
	if got := debugSet([]string{"kaas-0", "kaas-1"}); got != `{"kaas-0", "kaas-1"}` {
		t.Fatalf("debugSet = %s", got)
	}
	if got := debugSet(nil); got != "{}" {
		t.Fatalf("debugSet(nil) = %s", got)
	}
}

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{DataDir: t.TempDir(), Brokers: -1},
		{DataDir: t.TempDir(), Brokers: 65},
		{DataDir: t.TempDir(), Placement: "random"},
		{DataDir: t.TempDir(), Listen: "nonsense"},
		{DataDir: t.TempDir(), Listen: "127.0.0.1:99999"},
		{DataDir: t.TempDir(), Topics: []Topic{{Name: "../x", Partitions: 1}}},
		{DataDir: t.TempDir(), Topics: []Topic{{Name: "ok", Partitions: 0}}},
		{},
	} {
		if s, err := New(o); err == nil {
			s.Close()
			t.Errorf("New(%+v) accepted bad options", o)
		}
	}
}

func TestRestartOnSameVolumeCarriesVersionForward(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sb, err := New(Options{DataDir: dir, Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	commitGroups(t, sb, "orders", "survivor")
	v := sb.Assignment().AssignmentVersion
	sb.Close()
	sb2 := Start(t, Options{DataDir: dir, Brokers: 2, Topics: []Topic{{Name: "orders", Partitions: 1}}})
	a := sb2.Assignment()
	if a.AssignmentVersion != v+1 || a.ControllerEpoch != 2 {
		t.Fatalf("restart: version %d epoch %d, want %d and 2", a.AssignmentVersion, a.ControllerEpoch, v+1)
	}
	if snap := sb2.offsets.snapshot("survivor"); snap["orders/0"] != 1 {
		t.Fatalf("offsets not reloaded from the volume: %v", snap)
	}
	if !strings.Contains(strings.Join(sb2.Status().Groups, ","), "survivor") {
		t.Fatal("the reloaded group is not known")
	}
}

func FuzzRequestFrame(f *testing.F) {
	f.Add([]byte{0, 10, 0, 4, 0, 0, 0, 1, 0, 3, 'k', 'g', 'o', 0, 0})
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 1, 255, 255, 0, 1, 2})
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0, 0, 5, 1, 200, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		fr, err := parseRequestHeader(raw)
		if err != nil {
			return
		}
		if fr.bodyOff > len(raw) {
			t.Fatalf("body offset %d beyond frame %d", fr.bodyOff, len(raw))
		}
		_ = produceAcks(fr)
		if req, err := fr.decode(); err == nil {
			_ = fr.withBody(req)
		}
	})
}

func TestPersistedRestartKeepsRecordsAndGroups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := Options{DataDir: dir, Brokers: 2, Persist: true, Topics: []Topic{{Name: "orders", Partitions: 2}}}
	sb, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 2, 4)
	commitGroups(t, sb, "orders", "keeper")
	prod.Close()
	sb.Close()

	sb2 := Start(t, opts)
	adm := kadm.NewClient(newClient(t, sb2))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("orders", 1); o.Offset != 4 {
		t.Fatalf("end offset of orders/1 after restart = %d, want 4", o.Offset)
	}
	// Named partitions: kaas (and the sandbox) answer OffsetFetch-all with nothing.
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = "keeper"
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "orders", []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, newClient(t, sb2))
	if err != nil {
		t.Fatal(err)
	}
	var got []kmsg.OffsetFetchResponseTopicPartition
	for _, tt := range resp.Topics {
		got = append(got, tt.Partitions...)
	}
	for _, g := range resp.Groups {
		for _, tt := range g.Topics {
			for _, p := range tt.Partitions {
				got = append(got, kmsg.OffsetFetchResponseTopicPartition{Partition: p.Partition, Offset: p.Offset})
			}
		}
	}
	ok := len(got) > 0
	for _, p := range got {
		ok = ok && p.Partition == 0 && p.Offset == 1
	}
	if !ok {
		t.Fatalf("committed offset of keeper after restart = %+v", got)
	}
}

func TestListenPortsFollowTheFirst(t *testing.T) {
	t.Parallel()
	// Find two free consecutive ports; another process may grab them
	// between the probe and the start, so retry a few times.
	var sb *Sandbox
	var port int
	for attempt := 0; sb == nil; attempt++ {
		if attempt == 20 {
			t.Skip("no two consecutive free ports found")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port > 65000 {
			continue
		}
		s, err := New(Options{DataDir: t.TempDir(), Brokers: 2, Listen: fmt.Sprintf("0.0.0.0:%d", port)})
		if err != nil {
			if strings.Contains(err.Error(), "address already in use") {
				continue
			}
			t.Fatal(err)
		}
		sb = s
		t.Cleanup(sb.Close)
	}
	want := []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", port+1)}
	if got := sb.Bootstrap(); !slices.Equal(got, want) {
		t.Fatalf("bootstrap %v, want %v (wildcard binds advertise loopback)", got, want)
	}
	if _, err := sb.StopBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.StartBroker("kaas-1"); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", want[1], time.Second)
	if err != nil {
		t.Fatalf("kaas-1 not back on %s: %v", want[1], err)
	}
	c.Close()
}
