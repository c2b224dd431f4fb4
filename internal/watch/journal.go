package watch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Journal appends assignment versions to a directory as
// assignment-e<epoch>-v<version>.json, atomically (unique temp file, fsync,
// rename, fsync of the directory). `kaasctl takeover trace --journal DIR`
// reads it back.
type Journal struct {
	Dir string
}

// JournalName is the file name of one version.
func JournalName(epoch, version int64) string {
	return fmt.Sprintf("assignment-e%d-v%d.json", epoch, version)
}

// CheckJournalDir refuses a journal directory that kaas's operator would
// delete, and warns about one that shares kaas's volume. The operator
// sweeps each data-dir root every 300 s and removes every directory there
// it does not know (a name not starting with '.', other than __cluster and
// the topics; '.deleting-*' always), with everything below it; a topic's
// directory goes with the topic. A journal kept on the data volume, even
// where nothing deletes it, grows on the disk kaas writes its offsets to,
// so the advice is always a directory of its own outside the volume.
func CheckJournalDir(dir, dataDir string) (warning string, err error) {
	if dataDir == "" {
		return "", nil
	}
	ad, err1 := filepath.Abs(dir)
	dd, err2 := filepath.Abs(dataDir)
	if err1 != nil || err2 != nil {
		return "", nil
	}
	ad, dd = resolveExisting(ad), resolveExisting(dd)
	rel, err := filepath.Rel(dd, ad)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", nil // outside the data dir
	}
	const advice = "keep the journal outside the kaas volume, in a directory of its own (e.g. /var/lib/kaasctl/journal)"
	if rel == "." {
		return "", fmt.Errorf("refusing journal dir %s: it is the kaas data dir itself; %s", dir, advice)
	}
	top, _, _ := strings.Cut(rel, string(filepath.Separator))
	switch {
	case strings.HasPrefix(top, ".deleting-"):
		return "", fmt.Errorf("refusing journal dir %s: kaas's operator always removes %s at the data-dir root (%s) ('.deleting-*' names); %s", dir, filepath.Join(dd, top), dataDir, advice)
	case filepath.Join(dd, top) == volume.DataDirLayout(dd, "").ClusterDir:
		return fmt.Sprintf("journal dir %s is inside kaas's cluster dir: it grows on the disk kaas writes offsets and assignments to; %s", dir, advice), nil
	case !strings.HasPrefix(top, "."):
		return "", fmt.Errorf("refusing journal dir %s: %s is a directory at the data-dir root (%s), where kaas's operator deletes unknown directories every 300 s (and a topic's directory goes with the topic); %s", dir, filepath.Join(dd, top), dataDir, advice)
	}
	return fmt.Sprintf("journal dir %s is on the kaas data volume (%s; its '.' name keeps it from the operator's sweep), where it grows on the disk kaas writes to; %s", dir, dataDir, advice), nil
}

// resolveExisting resolves symbolic links in the longest existing prefix
// of an absolute path (the journal dir may not exist yet).
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Write stores one version; it returns the path written, or the existing
// identical file. Two different files claiming the same version are both
// kept (the second with a content hash in its name).
func (j *Journal) Write(epoch, version int64, data []byte, digest [32]byte) (string, error) {
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return "", err
	}
	name := JournalName(epoch, version)
	p := filepath.Join(j.Dir, name)
	if old, _, err := safefs.ReadFileFollow(p, 0); err == nil {
		if bytes.Equal(old, data) {
			return p, nil
		}
		p = filepath.Join(j.Dir, strings.TrimSuffix(name, ".json")+"-"+hex.EncodeToString(digest[:4])+".json")
		if old, _, err := safefs.ReadFileFollow(p, 0); err == nil && bytes.Equal(old, data) {
			return p, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return p, writeAtomic(p, data)
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".kaasctl-journal-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
			d.Close()
			return err
		}
		d.Close()
	}
	return nil
}
