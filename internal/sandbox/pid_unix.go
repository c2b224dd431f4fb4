//go:build unix

package sandbox

import (
	"github.com/kaasctl/kaasctl/internal/safefs"

	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
)

// RunningPID returns the pid in DATA/.kaasctl-sandbox.json when that
// process is alive (and is not us), else 0.
func RunningPID(dataDir string) int {
	data, _, err := safefs.ReadFileFollow(filepath.Join(dataDir, StateFileName), 1<<20)
	if err != nil {
		return 0
	}
	var sf struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(data, &sf) != nil || sf.PID <= 0 || sf.PID == os.Getpid() {
		return 0
	}
	if err := syscall.Kill(sf.PID, 0); err != nil {
		return 0
	}
	return sf.PID
}
