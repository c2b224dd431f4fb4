package watch

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// SettleOffsetsDir waits, on a volume whose kaas generation cannot yet
// tell its live offsets dir (no group file anywhere), until a group file
// appears in one of the candidate dirs (each kaas generation's live dir),
// and returns that dir: a follower started before a group's first commit
// then follows the dir kaas writes, not a guess. fsnotify on the dirs that
// exist, plus a poll every interval (NFS, dirs created later).
func SettleOffsetsDir(ctx context.Context, dirs []string, interval time.Duration) (string, error) {
	if len(dirs) == 0 {
		return "", errors.New("watch: no offsets dir to settle on")
	}
	if interval <= 0 {
		interval = time.Second
	}
	var events <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		for _, d := range dirs {
			_ = w.Add(d) // a dir not there yet is found by the poll
		}
		events = w.Events
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if d := firstWithGroupFile(dirs); d != "" {
			return d, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-events:
		case <-tick.C:
		}
	}
}

// firstWithGroupFile is the first of dirs holding an offset file ("" when
// none does).
func firstWithGroupFile(dirs []string) string {
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && offsetFileName(e.Name()) {
				return d
			}
		}
	}
	return ""
}
