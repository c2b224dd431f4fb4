package commands

import (
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Helpers shared by the assignment, takeover and watch commands.

// readAssignment reads one assignment and prints its warnings.
func readAssignment(g *Globals, path string) (*volume.Assignment, []volume.Finding, error) {
	a, fs, err := volume.ReadAssignment(path)
	if err != nil {
		return nil, nil, err
	}
	g.WarnFindings(fs)
	return a, fs, nil
}

// offsetFileGroups lists offset-file group names when a volume is
// given; a volume that cannot be resolved yields nothing and a warning.
func offsetFileGroups(g *Globals) []string {
	if !g.HasVolume() {
		return nil
	}
	l, err := g.Layout()
	if err != nil {
		g.Warnf("offset files not listed: %v", err)
		return nil
	}
	names, err := l.KnownOffsetGroups()
	if err != nil {
		g.Warnf("offset files not fully listed: %v", err)
	}
	return names
}
