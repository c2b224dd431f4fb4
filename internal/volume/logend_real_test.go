package volume

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/labdata"
)

// staleVolume is the real Go-flavour volume whose manifests trail the log.
func staleVolume(t testing.TB) string {
	d, err := labdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "stale-manifests-volume")
}

type logEndTruth struct {
	Partition   string `json:"partition"`
	ManifestHWM int64  `json:"manifestHWM"`
	LogFirst    int64  `json:"logFirst"`
	LogEnd      int64  `json:"logEnd"`
	TornTail    int64  `json:"tornTailBytes"`
}

func readLogEndTruth(t testing.TB, root string) []logEndTruth {
	f, err := os.Open(filepath.Join(root, "log-ends.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logEndTruth
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e logEndTruth
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestReadPartitionLogRealVolume: every partition of the real volume gives
// the log end and log start log-ends.jsonl recorded, and no torn tail.
func TestReadPartitionLogRealVolume(t *testing.T) {
	t.Parallel()
	root := staleVolume(t)
	truth := readLogEndTruth(t, root)
	if len(truth) != 9 {
		t.Fatalf("%d partitions in log-ends.jsonl", len(truth))
	}
	for _, e := range truth {
		i := strings.LastIndexByte(e.Partition, '/')
		dir := filepath.Join(root, "data", e.Partition[:i], e.Partition[i+1:])
		pl, fs, err := ReadPartitionLog(dir)
		if err != nil {
			t.Fatalf("%s: %v", e.Partition, err)
		}
		if pl.LogEnd != e.LogEnd || pl.LogStart != e.LogFirst || pl.TornBytes != e.TornTail {
			t.Errorf("%s: log [%d,%d) torn %d (%s), want [%d,%d) torn %d", e.Partition, pl.LogStart, pl.LogEnd, pl.TornBytes, pl.Method, e.LogFirst, e.LogEnd, e.TornTail)
		}
		if len(fs) != 0 {
			t.Errorf("%s: findings %+v", e.Partition, fs)
		}
		t.Logf("%s: log end %d (truth %d, manifest %d) via %s, %d reads, %d bytes", e.Partition, pl.LogEnd, e.LogEnd, e.ManifestHWM, pl.Method, pl.Reads, pl.BytesRead)
	}
}
