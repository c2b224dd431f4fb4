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
// delete: a non-dot directory directly at the data-dir root (it sweeps
// unknown directories there every 300 s).
func CheckJournalDir(dir, dataDir string) error {
	if dataDir == "" {
		return nil
	}
	ad, err1 := filepath.Abs(dir)
	dd, err2 := filepath.Abs(dataDir)
	if err1 != nil || err2 != nil {
		return nil
	}
	if filepath.Dir(ad) == filepath.Clean(dd) && !strings.HasPrefix(filepath.Base(ad), ".") {
		return fmt.Errorf("refusing journal dir %s: kaas's operator deletes unknown directories at the data-dir root (%s); use a path outside the volume, or a name starting with '.'", dir, dataDir)
	}
	if filepath.Clean(ad) == filepath.Clean(dd) {
		return fmt.Errorf("refusing journal dir %s: it is the data dir itself", dir)
	}
	return nil
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
