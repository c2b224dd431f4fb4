package inspect

import (
	"fmt"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// VersionWarnings says what is wrong with a new version cur of the
// assignment at path, seen after prev (nil: the first one): rewritten
// says the file changed without a new epoch or version (brokers skip such
// a file), and a lower epoch, or a lower version in the same epoch, means
// the file went backwards (restored or stale). Nothing: the order is sound.
func VersionWarnings(path string, prev, cur *volume.Assignment, rewritten bool) []string {
	var out []string
	if rewritten {
		out = append(out, fmt.Sprintf("%s was rewritten with the same epoch %d and version %d but different content (a manual edit? brokers skip such a file)", path, cur.ControllerEpoch, cur.AssignmentVersion))
	}
	if prev != nil && NewerThan(prev, cur) {
		out = append(out, fmt.Sprintf("version went backwards: epoch %d v%d after epoch %d v%d (a restored or stale file?)", cur.ControllerEpoch, cur.AssignmentVersion, prev.ControllerEpoch, prev.AssignmentVersion))
	}
	return out
}
