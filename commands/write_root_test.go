//go:build unix

package commands

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// treeHashes is fileHashes that records a symbolic link as its target
// (never followed).
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			m[rel+"/"] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			m[rel] = "link to " + to
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// linkClusterDir moves DATA/__cluster outside the volume and plants a
// link to it in its place; it returns the link's target.
func linkClusterDir(t *testing.T, data string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(filepath.Join(data, "__cluster"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "__cluster")); err != nil {
		t.Fatal(err)
	}
	return outside
}

// A planted DATA/__cluster link is checked like every component below the
// volume root: every writer refuses to write through it (offline reset,
// delete, restore from history, volume repair, volume migrate), leaving
// both the volume and the link's target byte for byte as they were;
// volume check names it; --follow-symlinks lets the user write through a
// link that is theirs.
func TestWritesRefuseALinkedClusterDir(t *testing.T) {
	t.Parallel()
	refused := func(t *testing.T, data, outside string, args ...string) {
		t.Helper()
		inVol, inLink := treeHashes(t, data), treeHashes(t, outside)
		r := runCLIWithin(t, nil, args...)
		if r.Code == 0 || !strings.Contains(r.Out+r.Err, "symbolic link") {
			t.Errorf("%v: exit %d, want a refusal naming the link\n%s\n%s", args, r.Code, r.Out, r.Err)
		}
		sameHashes(t, "the volume", inVol, treeHashes(t, data))
		sameHashes(t, "the link's target", inLink, treeHashes(t, outside))
		if after := treeHashes(t, outside); len(after) != len(inLink) {
			t.Errorf("%v: files appeared behind the link: %v", args, after)
		}
	}
	t.Run("offsets reset and delete", func(t *testing.T) {
		t.Parallel()
		data, _ := safeVolume(t)
		outside := linkClusterDir(t, data)
		refused(t, data, outside, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--execute")
		refused(t, data, outside, "offsets", "delete", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--execute")
		r := runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
		rep := mustJSON[inspect.CheckReport](t, r.Out)
		found := false
		for _, f := range rep.Findings {
			found = found || (f.Code == volume.CodeSymlinkedDir && f.Path == filepath.Join(data, "__cluster"))
		}
		if !found {
			t.Errorf("volume check does not name the linked cluster dir: %v", findingCodes(rep))
		}
		r = runCLIWithin(t, nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--execute", "--follow-symlinks")
		if got, _ := os.ReadFile(filepath.Join(outside, "__consumer_offsets", "g.json")); r.Code != 0 || string(got) != `{"offsets":{"orders/0":3}}` {
			t.Errorf("--follow-symlinks: exit %d file %s\n%s", r.Code, got, r.Err)
		}
		// Now a backup exists: a restore from it is refused the same way.
		refused(t, data, outside, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--to-history-before-anomaly", "--execute")
	})
	t.Run("volume repair", func(t *testing.T) {
		t.Parallel()
		data, cd := safeVolume(t)
		writeFile(t, cd, "__consumer_offsets/broken.json", `{"offsets":`)
		outside := linkClusterDir(t, data)
		refused(t, data, outside, "volume", "repair", "--data-dir", data, "--execute")
		if _, err := os.Lstat(filepath.Join(outside, ".kaasctl-quarantine")); err == nil {
			t.Error("volume repair made its quarantine behind the link")
		}
	})
	t.Run("volume migrate", func(t *testing.T) {
		t.Parallel()
		data, cd := safeVolume(t)
		os.Rename(filepath.Join(cd, "__consumer_offsets"), filepath.Join(data, "__consumer_offsets"))
		outside := linkClusterDir(t, data)
		refused(t, data, outside, "volume", "migrate", "--to", "0.2.18", "--kaas-version", "go", "--quiet-period", "0s", "--data-dir", data, "--execute")
	})
}
