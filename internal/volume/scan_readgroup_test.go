package volume

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// ReadGroup reads the files of the groups it accepts and lists the others
// by name, as NamesOnly does; every file is still an item, in order.
func TestScanOffsetsReadGroup(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	l := Layout{DataDir: data, ClusterDir: filepath.Join(data, ClusterSubdir)}
	writeOffsets(t, l.OffsetsPath(), 40)
	var asked atomic.Int64
	odd := func(g string) bool { asked.Add(1); return strings.IndexAny(g[len(g)-1:], "13579") == 0 }
	items, read := 0, 0
	_, err := ScanOffsets(l, ScanOptions{ReadGroup: odd}, func(it *OffsetScanItem) error {
		items++
		switch {
		case odd(it.Group) && it.File == nil:
			t.Errorf("%s accepted but not read", it.Group)
		case !odd(it.Group) && (it.File != nil || it.Err != nil || !it.ModTime.IsZero()):
			t.Errorf("%s not accepted but read", it.Group)
		case it.File != nil:
			read++
		}
		return nil
	})
	if err != nil || items != 40 || read != 20 || asked.Load() < 40 {
		t.Fatalf("%d items, %d read, ReadGroup asked %d times, err %v; want 40, 20", items, read, asked.Load(), err)
	}
}
