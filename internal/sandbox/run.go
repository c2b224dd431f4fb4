package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// What 'kaasctl sandbox' does around New: the topics it is given, the
// volume it may take, and what runs beside the brokers.

// ParseTopicSpec reads a --topic NAME[:PARTITIONS] (3 partitions when
// none are given).
func ParseTopicSpec(spec string) (Topic, error) {
	name, parts, ok := strings.Cut(spec, ":")
	t := Topic{Name: name, Partitions: 3}
	if ok {
		var n int
		if _, err := fmt.Sscanf(parts, "%d", &n); err != nil || fmt.Sprint(n) != parts {
			return t, fmt.Errorf("partitions %q is not a number", parts)
		}
		t.Partitions = int32(n)
	}
	if t.Partitions < 1 || t.Partitions > 10000 {
		return t, fmt.Errorf("partitions must be between 1 and 10000")
	}
	return t, nil
}

// TopicsOf is the topics of --topic specs, and with demo the demo's
// topics the specs do not name (a bad spec is a usage error naming it).
func TopicsOf(specs []string, demo bool) ([]Topic, error) {
	var topics []Topic
	for _, spec := range specs {
		t, err := ParseTopicSpec(spec)
		if err != nil {
			return nil, exit.UsageErrorf("--topic %q: %v", spec, err)
		}
		topics = append(topics, t)
	}
	if demo {
		for _, t := range DemoTopics {
			if !slices.ContainsFunc(topics, func(g Topic) bool { return g.Name == t.Name }) {
				topics = append(topics, t)
			}
		}
	}
	return topics, nil
}

// DataDirFor is the volume kaasctl sandbox runs on: dataDir (--data-dir)
// checked by CheckDataDir, or a new temporary dir when none is given
// (temp: the caller removes it unless --keep).
func DataDirFor(dataDir string, force bool) (dir string, temp bool, err error) {
	if dataDir == "" {
		if dir, err = os.MkdirTemp("", "kaasctl-sandbox-"); err != nil {
			return "", false, err
		}
		return dir, true, nil
	}
	return dataDir, false, CheckDataDir(dataDir, force)
}

// CheckDataDir refuses a volume that looks like a real kaas cluster's:
// the sandbox writes assignment.json, which kaasctl otherwise never does.
// A sandbox's own volume (or any with force) is refused only while
// another sandbox runs on it.
func CheckDataDir(dataDir string, force bool) error {
	st, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // created by the sandbox
	case err != nil:
		return err
	case !st.IsDir():
		return exit.UsageErrorf("--data-dir %s is not a directory", dataDir)
	}
	a := volume.DataDirLayout(dataDir, "").AssignmentPath()
	if _, err := os.Stat(a); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dataDir, StateDirName)); err == nil || force {
		if pid := RunningPID(dataDir); pid > 0 {
			return exit.Refusedf("another kaasctl sandbox (pid %d) is running on %s; stop it first", pid, dataDir)
		}
		return nil
	}
	return exit.Refusedf("%s exists and was not written by a kaasctl sandbox; the sandbox would overwrite it. Use an empty dir, or --force if this really is a scratch volume", a)
}

// Started is what runs beside the brokers once StartBeside returns.
type Started struct {
	Control   string // the control endpoint's URL; "" for none
	StateFile string
}

// StartBeside starts what runs beside the brokers: the control endpoint
// on control ("" for none, its quit told to quit), the demo consumers
// with demo, and the state file. cleanup undoes what was started, also
// when err is not nil.
func (s *Sandbox) StartBeside(control string, demo bool, quit *QuitRequest) (st Started, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if control != "" {
		cs, err := s.ServeControl(control, quit.Request)
		if err != nil {
			return st, cleanup, err
		}
		undo = append(undo, func() { cs.Close() })
		st.Control = cs.URL()
	}
	if demo {
		if err := s.StartDemo(); err != nil {
			return st, cleanup, err
		}
	}
	if st.StateFile, err = s.WriteStateFile(st.Control); err != nil {
		return st, cleanup, fmt.Errorf("write state file: %w", err)
	}
	undo = append(undo, func() { os.Remove(st.StateFile) })
	return st, cleanup, nil
}
