package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func findingCodes(fs []Finding) string {
	var cs []string
	for _, f := range fs {
		cs = append(cs, f.Code)
	}
	return strings.Join(cs, ",")
}

func TestParseAssignmentLab(t *testing.T) {
	t.Parallel()
	p := filepath.Join("..", "..", "testdata", "lab", "lab-go-kaas", "phase2-after-kill9-skafka-1", "assignment.json")
	a, fs, err := ReadAssignment(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.AssignmentVersion != 3 || a.Controller != "skafka-0" || len(a.Brokers) != 2 || len(a.ConsumerGroups) != 2 || len(a.Partitions) != 6 {
		t.Errorf("parsed %+v", a)
	}
	if len(fs) != 0 {
		t.Errorf("unexpected findings: %v", fs)
	}
	if a.GeneratedTime().IsZero() {
		t.Error("9-digit timestamp not parsed")
	}
	if got := a.Router().Group("g-beta").Coordinator; got != "skafka-2" {
		t.Errorf("g-beta -> %s", got)
	}
}

func TestParseAssignmentFindings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json, want string
	}{
		{`{"brokers":null,"partitions":[]}`, "assignment.brokersNull"},
		{`{"partitions":[]}`, "assignment.brokersMissing"},
		{`{"brokers":[{"id":"a","health":"alive"},{"id":"a","health":"alive"}],"partitions":[]}`, "assignment.duplicateBroker"},
		{`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"a"},{"groupId":"g","broker":"a"}]}`, "assignment.duplicateEntry"},
		{`{"brokers":[{"id":"a","health":"weird"}],"partitions":[]}`, "assignment.unknownHealth"},
		{`{"brokers":[{"id":"a","health":"dead"}],"partitions":[]}`, "assignment.noAliveBroker"},
		{`{"brokers":[],"partitions":[]}`, "assignment.noBrokers"},
		{`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"b"}]}`, "assignment.entryUnknownBroker"},
		{`{"brokers":[{"id":"a","health":"alive"},{"id":"b","health":"draining"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"b"}]}`, "assignment.entryDeadBroker"},
		{`{"brokers":[],"partitions":[],"x":1}`, "assignment.unknownFields"},
		{`{"generatedAt":"yesterday","brokers":[],"partitions":[]}`, "assignment.badTimestamp"},
	} {
		_, fs, err := ParseAssignment("a.json", []byte(tc.json))
		if err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if !strings.Contains(findingCodes(fs), tc.want) {
			t.Errorf("%s: findings %s, want %s", tc.json, findingCodes(fs), tc.want)
		}
		for _, f := range fs {
			if f.Path != "a.json" || f.Message == "" || f.Severity == "" {
				t.Errorf("incomplete finding %+v", f)
			}
		}
	}
}

func TestParseAssignmentErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ json, want string }{
		"empty":     {"", "file is empty"},
		"truncated": {`{"brokers":[{"id":"a"`, "truncated JSON"},
		"syntax":    {`{"brokers":[}`, "invalid JSON at byte"},
		"null":      {`null`, "JSON null"},
		"array":     {`[]`, "JSON array"},
		"field":     {`{"brokers":{"id":"a"}}`, "brokers holds a JSON object"},
	} {
		_, _, err := ParseAssignment("/v/assignment.json", []byte(tc.json))
		var fe *FileError
		if !errors.As(err, &fe) || fe.Path != "/v/assignment.json" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a FileError containing %q", name, err, tc.want)
		}
	}
	_, _, err := ReadAssignment(filepath.Join(t.TempDir(), "none.json"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzParseAssignment(f *testing.F) {
	for _, p := range []string{
		filepath.Join("..", "..", "testdata", "lab", "lab-go-kaas", "phase1-steady-3-brokers", "assignment.json"),
		filepath.Join("..", "..", "testdata", "lab", "lab-go-kaas", "phase2-after-kill9-skafka-1", "assignment.json"),
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"brokers":null}`))
	f.Add([]byte(`{"brokers":[{"id":"a","health":"alive"}],"consumerGroups":[{"groupId":"g","broker":"z"}]}`))
	f.Add([]byte(`{"brokers":[{"id":"a"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, fs, err := ParseAssignment("f.json", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Problem == "" {
				t.Fatalf("error is not a FileError with a problem: %v", err)
			}
			if a != nil {
				t.Fatal("assignment returned with an error")
			}
			return
		}
		if a.Brokers == nil || a.Partitions == nil {
			t.Fatal("nil arrays returned")
		}
		for _, f := range fs {
			if f.Code == "" || f.Message == "" {
				t.Fatalf("empty finding %+v", f)
			}
		}
		rt := a.Router()
		for _, e := range a.ConsumerGroups {
			if rt.Group(e.GroupID).Tier != "explicit" {
				t.Fatalf("entry %q not routed explicitly", e.GroupID)
			}
		}
	})
}

// scopedSeeds are documents the scoped reader must decide like the whole
// decode: the plain shape and the odd ones it hands back.
var scopedSeeds = []string{
	`{"brokers":[{"id":"a","health":"alive"},{"id":"b","health":"dead"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"z"},{"groupId":"h","broker":"b"},{"groupId":"g","broker":"a"},{"groupId":"k","broker":"a"}]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"broker":"z","groupId":"g"} , { "groupId" : "g\u0041" , "broker":"a"},{"GroupId":"g","broker":"a"}]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g\xff","broker":"z"},{"groupId":"g\ufffd","broker":"a"}]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[null,{"groupId":"g","broker":"a"}]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[1]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":{"groupId":"g"}}`,
	`{"Brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":null,"extra":1}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"a"}`,
	`{"controllerEpoch":"x","brokers":[],"partitions":[]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"a","epoch":4294967295},{"groupId":"g","broker":"a","epoch":1.5},{"groupId":"g","broker":"a","epoch":-1},{"groupId":"g","broker":"a","epoch":12,"extra":[1,{"x":"]"}]},{"groupId":"g","broker":"b\u0041","broker":"c"}]}`,
	`{"brokers":[{"id":"a","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"a","epoch":7,"Epoch":8},{"groupId":"g","broker":null},{"groupId":"g","broker":1}]}`,
}

// scopeOf is what the scoped reader must return for groups: the whole
// decode's entries of those groups and the findings about them.
func checkScoped(t *testing.T, data []byte, groups []string) {
	t.Helper()
	full, ffs, ferr := ParseAssignment("f.json", data)
	a, fs, err := ParseAssignmentWith("f.json", data, AssignmentOptions{Groups: groups})
	// The byte scan must decode exactly what encoding/json decodes.
	var ref Assignment
	if jerr := json.Unmarshal(data, &ref); (jerr == nil) != (ferr == nil) {
		t.Fatalf("encoding/json says %v, the reader %v", jerr, ferr)
	} else if jerr == nil && (fmt.Sprint(ref.ConsumerGroups) != fmt.Sprint(full.ConsumerGroups) || ref.Controller != full.Controller ||
		fmt.Sprint(ref.Brokers) != fmt.Sprint(full.Brokers) || ref.AssignmentVersion != full.AssignmentVersion || ref.ControllerEpoch != full.ControllerEpoch) {
		t.Fatalf("the reader decodes %+v\nencoding/json %+v", *full, ref)
	}
	if (ferr == nil) != (err == nil) || (err != nil && err.Error() != ferr.Error()) {
		t.Fatalf("errors differ: whole %v, scoped %v", ferr, err)
	}
	if err != nil {
		return
	}
	if a.EntryCount() != len(full.ConsumerGroups) {
		t.Fatalf("scoped read counts %d entries, the file holds %d", a.EntryCount(), len(full.ConsumerGroups))
	}
	want := keepGroups(full.ConsumerGroups, groups)
	if fmt.Sprint(a.ConsumerGroups) != fmt.Sprint(want) {
		t.Fatalf("scoped entries %v, want %v", a.ConsumerGroups, want)
	}
	head := *full
	head.ConsumerGroups, head.Entries, head.cache = a.ConsumerGroups, a.Entries, a.cache
	if fmt.Sprint(head) != fmt.Sprint(*a) {
		t.Fatalf("scoped assignment %+v\nwant %+v", *a, head)
	}
	var wantFs []Finding
	for _, f := range ffs {
		if !strings.HasPrefix(f.Message, "group ") || slices.ContainsFunc(groups, func(g string) bool { return strings.HasPrefix(f.Message, fmt.Sprintf("group %q ", g)) }) {
			wantFs = append(wantFs, f)
		}
	}
	if fmt.Sprint(fs) != fmt.Sprint(wantFs) {
		t.Fatalf("scoped findings %v\nwant %v", fs, wantFs)
	}
}

func TestScopedAssignmentReadsOnlyTheAskedEntries(t *testing.T) {
	t.Parallel()
	for _, s := range scopedSeeds {
		for _, groups := range [][]string{{}, {"g"}, {"h", "k"}, {"gA", "g\ufffd"}} {
			checkScoped(t, []byte(s), groups)
		}
	}
	a, fs, err := ParseAssignmentWith("f.json", []byte(scopedSeeds[0]), AssignmentOptions{Groups: []string{"g"}})
	if err != nil || len(a.ConsumerGroups) != 2 || a.EntryCount() != 4 || len(fs) != 3 {
		t.Fatalf("g: entries %v of %d, findings %v, %v", a.ConsumerGroups, a.EntryCount(), fs, err)
	}
}

func TestFoldedFindingsCountTheRest(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"assignmentVersion":1,"brokers":[{"id":"a","health":"alive"},{"id":"d","health":"dead"}],"partitions":[],"consumerGroups":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"groupId":"g-%d","broker":"%s"}`, i, []string{"a", "gone", "d"}[i%3])
	}
	b.WriteString("]}")
	_, all, err := ParseAssignment("f.json", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, folded, err := ParseAssignmentWith("f.json", []byte(b.String()), AssignmentOptions{Fold: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 666 || len(folded) != 2 || folded[0].Repeats+folded[1].Repeats != 664 || folded[0].Message != all[0].Message {
		t.Fatalf("%d findings whole, folded %+v", len(all), folded)
	}
}

func FuzzParseAssignmentScoped(f *testing.F) {
	for _, s := range scopedSeeds {
		f.Add([]byte(s), "g")
	}
	f.Fuzz(func(t *testing.T, data []byte, group string) {
		checkScoped(t, data, []string{group})
	})
}

// TestDuplicateEntriesInFileOrder: every repeat of a group is reported in
// file order against the group's first entry, whatever the order of ids,
// and with Fold the first repeat in the file carries the count.
func TestDuplicateEntriesInFileOrder(t *testing.T) {
	t.Parallel()
	doc := `{"assignmentVersion":1,"brokers":[{"id":"a","health":"alive"},{"id":"b","health":"alive"},{"id":"c","health":"alive"}],"partitions":[],"consumerGroups":[` +
		`{"groupId":"z","broker":"a"},{"groupId":"m","broker":"b"},{"groupId":"z","broker":"b"},{"groupId":"m","broker":"c"},{"groupId":"z","broker":"c"}]}`
	_, fs, err := ParseAssignment("a.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if f.Code == "assignment.duplicateEntry" {
			got = append(got, f.Message)
		}
	}
	want := []string{
		`group "z" has more than one consumerGroups entry (a, then b); the first wins`,
		`group "m" has more than one consumerGroups entry (b, then c); the first wins`,
		`group "z" has more than one consumerGroups entry (a, then c); the first wins`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("duplicate findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, fs, err = ParseAssignmentWith("a.json", []byte(doc), AssignmentOptions{Fold: true})
	if err != nil {
		t.Fatal(err)
	}
	var dups []Finding
	for _, f := range fs {
		if f.Code == "assignment.duplicateEntry" {
			dups = append(dups, f)
		}
	}
	if len(dups) != 1 || dups[0].Message != want[0] || dups[0].Repeats != 2 {
		t.Fatalf("folded: %+v", dups)
	}
}

func TestReadAssignmentsKeepsOrderAndFirstError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", `{"controllerEpoch":1,"assignmentVersion":3,"brokers":[],"partitions":[]}`)
	b := write("b.json", `{"controllerEpoch":2,"assignmentVersion":1,"brokers":[],"partitions":[]}`)
	rs, err := ReadAssignments(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Assignment.AssignmentVersion != 3 || rs[1].Assignment.ControllerEpoch != 2 {
		t.Fatalf("reads out of order: %+v", rs)
	}
	bad := write("bad.json", `{"controllerEpoch":`)
	missing := filepath.Join(dir, "missing.json")
	_, err = ReadAssignments(a, bad, missing)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != bad {
		t.Fatalf("error %v, want the first failing path %s", err, bad)
	}
}
