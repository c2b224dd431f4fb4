package exporter

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kaasctl/kaasctl/observe"
)

// Group ids are arbitrary strings: whatever they hold, the exposition must
// parse back to the same label values.
func TestTextExpositionRoundTrip(t *testing.T) {
	t.Parallel()
	odd := []string{`plain`, `quo"te`, `back\slash`, "new\nline", `ünï/cødé`, `{}=,`, ``}
	w := newTextWriter(nil)
	for i, g := range odd {
		w.sample(dGroupLag, float64(i), g)
	}
	w.sample(dBuildInfo, 1, "v1", "abc", "go1")
	text := string(w.bytes())
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	got := map[string]float64{}
	for _, m := range mfs["kaas_group_lag"].GetMetric() {
		got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	for i, g := range odd {
		if v, ok := got[g]; !ok || v != float64(i) {
			t.Errorf("group %q: %v (present %v)", g, v, ok)
		}
	}
	if mfs["kaas_exporter_build_info"] == nil || len(mfs) != 2 {
		t.Errorf("families %v", mfs)
	}
	if strings.Contains(text, "kaas_group_health") {
		t.Error("a family without samples was written")
	}
}

func TestFamiliesFollowConventions(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range families {
		if seen[f.name] {
			t.Errorf("%s declared twice", f.name)
		}
		seen[f.name] = true
		if !strings.HasPrefix(f.name, "kaas_") {
			t.Errorf("%s: no kaas_ prefix", f.name)
		}
		if (f.typ == counterType) != strings.HasSuffix(f.name, "_total") {
			t.Errorf("%s: type %s; counters and only counters end in _total", f.name, f.typ)
		}
		if strings.HasSuffix(f.name, "_info") && f.typ != gaugeType {
			t.Errorf("%s: an info metric is a gauge", f.name)
		}
		for _, unit := range []string{"_ms", "_milliseconds", "_minutes", "_hours"} {
			if strings.Contains(f.name, unit) {
				t.Errorf("%s: not a base unit", f.name)
			}
		}
		if f.help == "" {
			t.Errorf("%s: no help", f.name)
		}
	}
}

// The alert rules, their tests and the dashboard name only metrics the
// exporter serves.
func TestMonitoringNamesExist(t *testing.T) {
	t.Parallel()
	// The probe's families (registered with --probe only).
	known := map[string]bool{"kaas_probe_success": true, "kaas_probe_step_duration_seconds": true,
		"kaas_probe_failures_total": true, "kaas_probe_canary_info": true, "kaas_probe_last_timestamp_seconds": true}
	for _, f := range families {
		known[f.name] = true
	}
	// And the exporter's own registry (refresh durations, HTTP limits).
	mfs, err := New(Options{Source: &observe.Source{}}).Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		known[mf.GetName()] = true
	}
	re := regexp.MustCompile(`kaas_[a-z_]+`)
	for _, name := range []string{"alerts.yml", "alerts_test.yml", "grafana-dashboard.json", "runbooks.md"} {
		data, err := os.ReadFile(filepath.Join("..", "monitoring", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllString(string(data), -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
			if !known[base] && !known[m] {
				t.Errorf("monitoring/%s names %s, which the exporter does not serve", name, m)
			}
		}
	}
}

// The dashboard shows the offsets follower and the journal, not only the
// alert rules: an operator sees whether rewinds are followed as they happen
// and whether the history has gaps.
func TestDashboardShowsFollowerAndJournal(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			ID      int `json:"id"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json is not valid JSON: %v", err)
	}
	ids := map[int]bool{}
	var exprs []string
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, f := range []*family{dFollowing, dOffsetChanges, dJournalRecords, dJournalErrors, dGeneration,
		dCondition, dUnknownSince, dDrainSeconds, dNotDraining, dRetentionBreach, dLastCommitAge} {
		if !strings.Contains(all, f.name) {
			t.Errorf("no dashboard panel queries %s", f.name)
		}
	}
	// The coordinator probe's series come from its own registry.
	for _, name := range []string{"kaas_probe_success", "kaas_probe_failures_total"} {
		if !strings.Contains(all, name) {
			t.Errorf("no dashboard panel queries %s", name)
		}
	}
}

// A label value that is not UTF-8 (a group id kaas accepted as bytes) is
// written valid, with its exact bytes in NAME_base64: the page parses
// under UTF-8 validation and two such ids stay two series.
func TestTextInvalidUTF8Labels(t *testing.T) {
	t.Parallel()
	w := newTextWriter(nil)
	ids := []string{"bad\xff", "bad\xfe", "bad\uFFFD", "ok"}
	for i, g := range ids {
		w.sample(dPartLag, float64(i), g, "t\x80", "0")
	}
	text := string(w.bytes())
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	ms := mfs["kaas_group_partition_lag"].GetMetric()
	if len(ms) != len(ids) {
		t.Fatalf("%d series, want %d:\n%s", len(ms), len(ids), text)
	}
	for _, m := range ms {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		want := ids[int(m.GetGauge().GetValue())]
		got := l["group"]
		if b, ok := l["group"+Base64LabelSuffix]; ok {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				t.Fatal(err)
			}
			got = string(raw)
			if l["group"] != "bad\uFFFD" {
				t.Errorf("group label %q", l["group"])
			}
		}
		if got != want {
			t.Errorf("series %v: id %q, want %q", l, got, want)
		}
		if l["topic"] != "t\uFFFD" || l["topic_base64"] != base64.StdEncoding.EncodeToString([]byte("t\x80")) {
			t.Errorf("topic labels %v", l)
		}
	}
}

// TestTextBufChunks: a family's samples written across many chunks (from
// no hint, a zero hint and a small one) read back byte for byte.
func TestTextBufChunks(t *testing.T) {
	t.Parallel()
	var want strings.Builder
	for i := range 20000 {
		want.WriteString("kaas_x{group=\"g-" + strconv.Itoa(i) + "\"} 1\n")
		want.WriteString("é\n")
	}
	for _, hint := range []int{-1, 0, 100} {
		var b textBuf
		if hint >= 0 {
			b.Grow(hint)
		}
		for i := range 20000 {
			b.WriteString("kaas_x{group=\"g-" + strconv.Itoa(i) + "\"} 1")
			b.WriteByte('\n')
			b.WriteRune('é')
			b.WriteByte('\n')
		}
		var got []byte
		for _, c := range b.chunks {
			if cap(c) > maxChunk && hint < maxChunk {
				t.Fatalf("hint %d: a chunk of %d bytes", hint, cap(c))
			}
			got = append(got, c...)
		}
		if string(got) != want.String() || b.Len() != want.Len() {
			t.Fatalf("hint %d: %d bytes read back (Len %d), want %d", hint, len(got), b.Len(), want.Len())
		}
	}
}

// A family past zAfter is compressed as it is written, into a gzip member
// of its own between the members of the small families around it: the
// page reads back as the same text, in family order, and the length
// counted is the text's.
func TestTextCompressedAsWritten(t *testing.T) {
	t.Parallel()
	var want strings.Builder
	head := func(f *family) {
		want.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.typ + "\n")
	}
	hint := make([]int, len(families))
	hint[dGroupLag.idx] = 8 << 20 // a hint past zAfter is capped
	w := newTextWriter(hint)
	w.sample(dRefreshes, 3)
	w.sample(dBuildInfo, 1, "v1", "abc", "go1")
	n := 3*zAfter/len(`kaas_group_lag{group="g-0000000"} 1234567`) + 1
	var lines strings.Builder
	for i := range n {
		g := "g-" + strconv.Itoa(1000000+i)
		w.sample(dGroupLag, float64(1234567+i), g)
		lines.WriteString(`kaas_group_lag{group="` + g + `"} ` + formatFloat(float64(1234567+i)) + "\n")
	}
	if w.zs == nil || w.zs[dGroupLag.idx] == nil {
		t.Fatalf("%d bytes of kaas_group_lag not compressed", w.bufs[dGroupLag.idx].Len())
	}
	if held := w.bufs[dGroupLag.idx].held; held >= zAfter {
		t.Fatalf("%d bytes held uncompressed", held)
	}
	for _, f := range families {
		switch f {
		case dGroupLag:
			head(f)
			want.WriteString(lines.String())
		case dRefreshes:
			head(f)
			want.WriteString("kaas_exporter_refreshes_total 3\n")
		case dBuildInfo:
			head(f)
			want.WriteString(`kaas_exporter_build_info{version="v1",revision="abc",goversion="go1"} 1` + "\n")
		}
	}
	p := w.page()
	size := p.n
	var got strings.Builder
	if err := writeText(&got, &p); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("page differs: %d bytes, want %d", got.Len(), want.Len())
	}
	if size != want.Len() {
		t.Errorf("text length %d, want %d", size, want.Len())
	}
	// A gzip scrape is ONE member, page and own metrics: a reader that
	// stops after the first member (curl --compressed) reads all of it.
	own := "kaas_exporter_own_metric 1\n"
	var body bytes.Buffer
	fw, _ := flate.NewWriter(io.Discard, flate.BestSpeed)
	if err := p.writeGzip(&body, []byte(own), fw); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&body)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	one, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("reading the member: %v", err)
	}
	if string(one) != want.String()+own {
		t.Fatalf("the first member holds %d bytes, want %d (the page, then the own metrics)", len(one), want.Len()+len(own))
	}
	if body.Len() != 0 {
		t.Fatalf("%d bytes after the member", body.Len())
	}
}
