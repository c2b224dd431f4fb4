package observe

import "testing"

// TestFileRecsByGroup: the scan's records, dir by dir, become one a group
// in group order, the one inspect.PickFile counts (the live dir's over
// another dir's whichever came first), and finder finds them walking a sorted selection or
// searching an unsorted one.
func TestFileRecsByGroup(t *testing.T) {
	t.Parallel()
	rec := func(g, layout string) fileRec { return fileRec{group: g, layout: layout, path: layout + "/" + g} }
	cases := []struct {
		name string
		in   fileRecs
		want []string // path of each kept record, in order
	}{
		{"legacy dir first", fileRecs{rec("a", "legacy"), rec("c", "legacy"), rec("a", "current"), rec("b", "current")},
			[]string{"current/a", "current/b", "legacy/c"}},
		{"live dir first", fileRecs{rec("a", "current"), rec("b", "current"), rec("a", "legacy")},
			[]string{"current/a", "current/b"}},
		{"neither live", fileRecs{rec("a", "notRead"), rec("a", "legacy")}, []string{"notRead/a"}},
		{"one dir", fileRecs{rec("a", "current"), rec("b", "current")}, []string{"current/a", "current/b"}},
		// An undetermined volume: the first dir's file counts (the newest
		// generation's live dir is scanned first), as inspect.PickFile says.
		{"undetermined", fileRecs{rec("a", "undetermined"), rec("b", "undetermined"), rec("a", "undetermined")}, []string{"undetermined/a", "undetermined/b"}},
	}
	for _, c := range cases {
		got := c.in.byGroup()
		var paths []string
		for _, r := range got {
			paths = append(paths, r.path)
		}
		if len(paths) != len(c.want) {
			t.Errorf("%s: kept %v, want %v", c.name, paths, c.want)
			continue
		}
		for i := range paths {
			if paths[i] != c.want[i] {
				t.Errorf("%s: kept %v, want %v", c.name, paths, c.want)
				break
			}
		}
	}
	rs := fileRecs{rec("a", "current"), rec("c", "current"), rec("e", "current")}
	find := rs.finder([]string{"a", "b", "c", "d", "e", "f"})
	for _, g := range []string{"a", "b", "c", "d", "e", "f"} {
		if r := find(g); (r != nil) != (g == "a" || g == "c" || g == "e") || r != nil && r.group != g {
			t.Errorf("sorted walk: %s -> %+v", g, r)
		}
	}
	find = rs.finder([]string{"e", "b", "a"})
	for _, g := range []string{"e", "b", "a"} {
		if r := find(g); (r != nil) != (g != "b") || r != nil && r.group != g {
			t.Errorf("unsorted: %s -> %+v", g, r)
		}
	}
}
