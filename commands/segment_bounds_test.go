//go:build unix

package commands

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// replaceSegments replaces orders/0's segments with one segment named for
// base holding the given batches.
func replaceSegments(t *testing.T, data string, base int64, batches ...[]byte) string {
	t.Helper()
	dir := filepath.Join(data, "orders", "0")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") || strings.HasSuffix(e.Name(), ".index") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	var log []byte
	for _, b := range batches {
		log = append(log, b...)
	}
	p := filepath.Join(dir, volume.SegmentLogName(base, 1))
	if err := os.WriteFile(p, log, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A segment holding bounds kaas could never have written (a flipped sign
// bit, an end past int64, a log start past its end): volume check names
// it, describe shows no negative or overflowed number, and no offline
// reset writes anything derived from it (refused, exit 4, the volume byte
// for byte as it was).
func TestImpossibleSegmentBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		base    int64
		batches [][]byte
		spec    []string
	}{
		{"bit 63 flipped", 3, [][]byte{volume.EncodeBatch(3, 5, 1, nil), volume.EncodeBatch(math.MinInt64+8, 5, 1, nil)}, []string{"--to-latest"}},
		{"end past int64", math.MaxInt64 - 5, [][]byte{volume.EncodeBatch(math.MaxInt64-5, 10, 1, nil)}, []string{"--to-latest"}},
		{"log start past the log end", 1000, [][]byte{volume.EncodeBatch(5, 5, 1, nil)}, []string{"--to-earliest"}},
		{"shift onto it", 1000, [][]byte{volume.EncodeBatch(5, 5, 1, nil)}, []string{"--shift-by", "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data, _ := safeVolume(t)
			seg := replaceSegments(t, data, c.base, c.batches...)
			r := runCLI(t, "", nil, "volume", "check", "--data-dir", data, "-o", "json")
			rep := mustJSON[inspect.CheckReport](t, r.Out)
			found := false
			for _, f := range rep.Findings {
				found = found || (f.Code == volume.CodeSegmentImpossible && f.Path == seg && f.Severity == volume.SevError)
			}
			if r.Code != 3 || !found {
				t.Errorf("volume check: exit %d, findings %v", r.Code, findingCodes(rep))
			}
			r = runCLI(t, "", nil, "groups", "describe", "g", "--data-dir", data, "-o", "json")
			var doc any
			dec := json.NewDecoder(strings.NewReader(r.Out))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("describe: %v\n%s", err, r.Out)
			}
			if bad := outOfRangeNumbers(doc); len(bad) > 0 {
				t.Errorf("describe shows numbers no log holds: %v\n%s", bad, r.Out)
			}
			// No retention breach (which pages) from a log start past the
			// log end: the bounds are unknown, not evidence.
			if r := runCLI(t, "", nil, "exporter", "--once", "--data-dir", data); strings.Contains(r.Out, `kaas_group_retention_breach_seconds{group="g"}`) {
				t.Errorf("the exporter reports a retention breach:\n%s", grepLines(r.Out, `group="g"`))
			}
			before := fileHashes(t, data)
			r = runCLI(t, "", nil, append([]string{"offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--execute"}, c.spec...)...)
			if r.Code != 4 || !strings.Contains(r.Out+r.Err, "impossible log bound") {
				t.Errorf("reset %v: exit %d, want 4 naming the impossible bound\n%s\n%s", c.spec, r.Code, r.Out, r.Err)
			}
			sameHashes(t, "refused reset", before, fileHashes(t, data))
		})
	}
}

// An active segment that cannot be read (a FIFO, a link, one without read
// permission) is an error in volume check, not "OK: 0 errors".
func TestUnreadableActiveSegmentIsAFinding(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "link", "denied"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			if kind == "denied" && os.Geteuid() == 0 {
				t.Skip("root reads every file")
			}
			data, _ := safeVolume(t)
			seg := replaceSegments(t, data, 3, volume.EncodeBatch(3, 5, 1, nil))
			switch kind {
			case "fifo":
				os.Remove(seg)
				if err := syscall.Mkfifo(seg, 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			case "link":
				real := filepath.Join(t.TempDir(), "seg.log")
				os.Rename(seg, real)
				os.Symlink(real, seg)
			case "denied":
				os.Chmod(seg, 0)
			}
			r := runCLIWithin(t, nil, "volume", "check", "--data-dir", data, "-o", "json")
			rep := mustJSON[inspect.CheckReport](t, r.Out)
			found := false
			for _, f := range rep.Findings {
				found = found || (f.Code == volume.CodeSegmentUnreadable && f.Path == seg && f.Severity == volume.SevError)
			}
			if r.Code != 3 || !found {
				t.Errorf("volume check: exit %d, findings %v", r.Code, findingCodes(rep))
			}
		})
	}
}

// outOfRangeNumbers lists the numbers of a JSON document that are negative
// or beyond 2^62 (no offset, lag or count of a real log).
func outOfRangeNumbers(v any) []string {
	var out []string
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err != nil || n < 0 || n > 1<<62 {
			if f, ferr := x.Float64(); ferr != nil || f < 0 || f > 1<<62 {
				out = append(out, x.String())
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, outOfRangeNumbers(e)...)
		}
	case map[string]any:
		for _, e := range x {
			out = append(out, outOfRangeNumbers(e)...)
		}
	}
	return out
}
