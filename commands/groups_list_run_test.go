package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/views"
)

// runGroupsList called directly, without a cli.Context: offline with a
// filter, and the usage errors of live-only options without brokers.
func TestRunGroupsListDirect(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	var out, errb bytes.Buffer
	g := mustGlobals(t, &IOStreams{Out: &out, Err: &errb}, "--data-dir", vol, "--kaas-version", "0.2.18", "-o", "json")
	o := groupsListOptions{filter: inspect.GroupFilter{Issue: inspect.IssueCorruptFile}}
	if err := runGroupsList(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var v views.GroupsListView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if v.Shown == 0 || v.Shown != len(v.Groups) || v.Total <= v.Shown {
		t.Fatalf("shown %d of %d (%d rows)", v.Shown, v.Total, len(v.Groups))
	}
	for _, r := range v.Groups {
		if !r.HasIssue(inspect.IssueCorruptFile) {
			t.Errorf("%s shown without %s: %v", r.Group, inspect.IssueCorruptFile, r.Issues)
		}
	}
	if !strings.Contains(errb.String(), "no broker was asked") {
		t.Errorf("offline note missing: %s", errb.String())
	}
	err := runGroupsList(context.Background(), g, groupsListOptions{states: []string{"Empty"}})
	if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "--state needs live state") {
		t.Errorf("--state without brokers: %v", err)
	}
}
