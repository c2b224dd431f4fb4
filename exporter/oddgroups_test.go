package exporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kaasctl/kaasctl/observe"
)

// A scrape never fails because one group is odd: a group entered twice in
// assignment.json on two brokers (mid-move), one entered on a dead broker,
// an offset file that is not JSON, an empty one, one naming a partition
// past any log end, one whose name is not UTF-8. Each is counted (a volume
// finding, an incident), every other group is served, and the page parses
// with every series once, as Prometheus requires.
func TestScrapeServesOddGroups(t *testing.T) {
	t.Parallel()
	l, od := offsetsVolume(t, `{"offsets":{"orders/0":5,"orders/1":7}}`, "app", "billing", "moving")
	odd := map[string]string{
		"broken.json":      `{"offsets":`,
		"empty.json":       ``,
		"past.json":        `{"offsets":{"orders/0":900}}`,
		"bad\xffname.json": `{"offsets":{"orders/0":1}}`,
	}
	for name, body := range odd {
		if err := os.WriteFile(filepath.Join(od, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := `{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"dead"}],` +
		`"partitions":[],"consumerGroups":[{"groupId":"moving","broker":"kaas-0","epoch":1},{"groupId":"moving","broker":"kaas-1","epoch":1},{"groupId":"billing","broker":"kaas-1","epoch":1}]}`
	if err := os.WriteFile(l.AssignmentPath(), []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(Options{Source: &observe.Source{Layout: &l}, Window: time.Minute, PartitionMetrics: true})
	for range 2 {
		e.Refresh(context.Background())
	}
	var b bytes.Buffer
	if err := e.WriteMetrics(&b, nil); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("the page does not parse: %v", err)
	}
	seen := map[string]bool{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			ls := model.LabelSet{model.MetricNameLabel: model.LabelValue(name)}
			for _, lp := range m.GetLabel() {
				ls[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
			}
			if seen[ls.String()] {
				t.Errorf("series %s twice on the page", ls)
			}
			seen[ls.String()] = true
		}
	}
	for _, want := range []string{`kaas_group_coordinator_info{group="app"`, `kaas_group_coordinator_info{group="moving"`, `kaas_group_coordinator_info{group="billing"`,
		"kaas_group_coordinator_info{group=\"bad\uFFFDname\",broker=", `group_base64="YmFk/25hbWU="`, `kaas_volume_findings{severity="error"`, `kaas_exporter_groups_invalid_utf8 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
