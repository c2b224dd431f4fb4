package repair

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

func TestCheckTimeAnswer(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	// Ten records, one an hour from base.
	stamps := func(from, to int64) []wire.RecordStamp {
		var out []wire.RecordStamp
		for o := from; o < to; o++ {
			out = append(out, wire.RecordStamp{Offset: o, Timestamp: base.Add(time.Duration(o) * time.Hour)})
		}
		return out
	}
	log := wire.LogOffsets{Start: 0, End: 10}
	at := base.Add(3*time.Hour + 30*time.Minute)
	cases := []struct {
		name    string
		t       time.Time
		off     int64
		recs    []wire.RecordStamp
		bad, ok bool
		want    string
	}{
		{"right answer", at, 4, stamps(3, 5), false, true, ""},
		{"exact time", base.Add(3 * time.Hour), 3, stamps(2, 4), false, true, ""},
		{"first offset, time before the log", base.Add(-time.Hour), 0, stamps(0, 1), false, true, ""},
		{"log end, time after the log", base.Add(20 * time.Hour), 10, stamps(9, 10), false, true, ""},
		// The Go generation's answer: 0 for every time.
		{"zero for a recent time", at, 0, stamps(0, 1), true, true, "the record at offset 0 is from 2026-11-30T00:00:00Z, earlier than that"},
		{"zero for a future time", base.Add(20 * time.Hour), 0, stamps(0, 1), true, true, "earlier than that"},
		{"too late", at, 6, stamps(5, 7), true, true, "the record before it, at offset 5"},
		{"records missing", at, 4, nil, false, false, ""},
		{"empty log", at, 0, nil, false, true, ""},
	}
	for _, c := range cases {
		lo := log
		if c.name == "empty log" {
			lo = wire.LogOffsets{}
		}
		ev, ok := CheckTimeAnswer(c.t, c.off, lo, c.recs)
		if ok != c.ok || (ev != "") != c.bad || !strings.Contains(ev, c.want) {
			t.Errorf("%s: %q %v", c.name, ev, ok)
		}
	}
}

// When the records cannot be read, an answer of the log start (the Go
// generation's answer for every time) is refused; any other answer is
// only a warning.
func TestCheckTimeAnswersUnreadable(t *testing.T) {
	t.Parallel()
	cl := &wire.Client{Settings: &wire.Settings{Brokers: []string{"127.0.0.1:1"}, MaxVersions: "no-such-cap"}}
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	timed := kadm.ListedOffsets{"orders": {
		0: {Topic: "orders", Partition: 0, Offset: 0},
		1: {Topic: "orders", Partition: 1, Offset: 7},
	}}
	logs := map[string]map[int32]wire.LogOffsets{"orders": {0: {Start: 0, End: 10}, 1: {Start: 0, End: 10}}}
	bad, unchecked := checkTimeAnswers(context.Background(), cl, at, timed, logs)
	if !strings.Contains(bad[tpKey{"orders", 0}], "the brokers answered the log start (0)") || unchecked[tpKey{"orders", 1}] == "" || bad[tpKey{"orders", 1}] != "" {
		t.Errorf("bad %q unchecked %q", bad, unchecked)
	}
}

// The refusal states what the volume's generation answers for a time: the
// Go flavour offset 0, the Rust broker -1/-1 (both seen on real brokers),
// and each in turn when the generation is undetermined.
func TestTimeRefusalNamesTheGenerationsAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := volume.Layout{DataDir: dir, ClusterDir: dir + "/__cluster"}
	for gen, want := range map[volume.Generation]string{volume.GenGo: "offset 0 for every timestamp", volume.Gen018: "offset -1, timestamp -1"} {
		msg := timeRefusal([]string{"orders/1", "orders/0"}, l.PinnedTo(gen, "test").Gen)
		if !strings.Contains(msg, want) || !strings.Contains(msg, "orders/0, orders/1") {
			t.Errorf("%s: %s", gen, msg)
		}
	}
	msg := timeRefusal([]string{"orders/0"}, volume.GenerationInfo{})
	if !strings.Contains(msg, "offset 0 for every") || !strings.Contains(msg, "offset -1, timestamp -1") {
		t.Errorf("undetermined: %s", msg)
	}
}
