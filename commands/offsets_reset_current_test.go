package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type currentRow struct {
	Topic     string
	Partition int32
	New       int64
	Changed   bool
	Error     string
	Result    string
}

func currentRows(t *testing.T, out string) []currentRow {
	t.Helper()
	var doc struct{ Groups []struct{ Rows []currentRow } }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Groups) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	return doc.Groups[0].Rows
}

// --to-current offline, as Kafka's tool does it: a committed partition
// keeps its offset, one without gets the log end its segments give
// (written and verified); without a verified log end the row is refused
// and nothing is written; and when nothing changes, nothing claims to be
// written or verified.
func TestToCurrentWithoutCommittedOffset(t *testing.T) {
	t.Parallel()
	t.Run("log end from the segments", func(t *testing.T) {
		t.Parallel()
		data, cd := safeVolume(t) // g has orders/0 at 5
		writePartitionLog(t, data, "orders/1", 0, 20)
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-current", "--execute", "-o", "json")
		rows := currentRows(t, r.Out)
		if r.Code != 0 || len(rows) != 2 || rows[0].New != 5 || rows[0].Changed || rows[1].New != 20 || !rows[1].Changed || rows[1].Result != "OK" {
			t.Fatalf("exit %d rows %+v\n%s", r.Code, rows, r.Err)
		}
		if got, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json")); string(got) != `{"offsets":{"orders/0":5,"orders/1":20}}` {
			t.Errorf("file %s", got)
		}
	})
	t.Run("unverified log end refused", func(t *testing.T) {
		t.Parallel()
		data, _ := safeVolume(t)
		writeFile(t, data, "orders/1/manifest.json", `{"epoch":1,"highWatermark":20,"logStartOffset":0}`)
		before := fileHashes(t, data)
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-current", "--execute", "-o", "json")
		rows := currentRows(t, r.Out)
		if r.Code != 4 || len(rows) != 2 || rows[1].Error == "" || !strings.Contains(rows[1].Error, "log end") {
			t.Errorf("exit %d rows %+v\n%s", r.Code, rows, r.Err)
		}
		sameHashes(t, "refused --to-current", before, fileHashes(t, data))
		r = runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-current")
		if strings.Contains(r.Out, " NEW 0") || !strings.Contains(r.Out, "-") {
			t.Errorf("the table shows a NEW for a refused row:\n%s", r.Out)
		}
	})
	t.Run("nothing to change", func(t *testing.T) {
		t.Parallel()
		data, _ := safeVolume(t)
		before := fileHashes(t, data)
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders:0", "--to-current", "--execute")
		if r.Code != 0 || strings.Contains(r.Err, "verified") || !strings.Contains(r.Err, "nothing was written") {
			t.Errorf("exit %d\n%s", r.Code, r.Err)
		}
		sameHashes(t, "unchanged --to-current", before, fileHashes(t, data))
	})
}
