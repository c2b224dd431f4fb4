//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// An offset file that is a symbolic link to a regular file is a live group
// for kaas (it follows the link on read): the group stays in groups list,
// flagged as linked (not corrupt), describe names the link, and volume
// check reports the link once; kaasctl still reads nothing through it.
func TestSymlinkedGroupFileStaysListed(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	gp := filepath.Join(cd, "__consumer_offsets", "g.json")
	real := filepath.Join(t.TempDir(), "g.json")
	os.Rename(gp, real)
	os.Symlink(real, gp)
	r := runCLI(t, "", nil, "groups", "list", "--data-dir", data, "-o", "json")
	v := mustJSON[views.GroupsListView](t, r.Out)
	var row *inspect.GroupRow
	for i := range v.Groups {
		if v.Groups[i].Group == "g" {
			row = &v.Groups[i]
		}
	}
	if row == nil || !slices.Contains(row.Issues, inspect.IssueSymlinkedFile) || slices.Contains(row.Issues, inspect.IssueCorruptFile) {
		t.Fatalf("groups list: %+v\n%s", row, r.Err)
	}
	r = runCLI(t, "", nil, "groups", "describe", "g", "--data-dir", data)
	if !strings.Contains(r.Out+r.Err, "symbolic link") || !strings.Contains(r.Out+r.Err, real) {
		t.Errorf("describe: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	r = runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
	rep := mustJSON[inspect.CheckReport](t, r.Out)
	links, corrupt := 0, 0
	for _, f := range rep.Findings {
		if f.Path == gp && f.Code == volume.CodeSymlink {
			links++
		}
		if f.Path == gp && f.Code == volume.CodeOffsetsCorrupt {
			corrupt++
		}
	}
	if links != 1 || corrupt != 0 {
		t.Errorf("volume check: %d link findings, %d corrupt: %v", links, corrupt, findingCodes(rep))
	}
}
