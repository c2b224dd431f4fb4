package watchrun

import (
	"crypto/sha256"
	"fmt"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// Once is the current version's summary and the placements of its
// groups, for its command to print (and journals the version).
func Once(env Env, path string, journal *watch.Journal, groupsFor func(*volume.Assignment) []string, filter []string) (WatchOnceView, []inspect.Placement, error) {
	data, _, err := safefs.Read(path, true, 0)
	if err != nil {
		return WatchOnceView{}, nil, &volume.FileError{Path: path, Problem: safefs.Problem(err)}
	}
	a, fs, err := volume.ParseAssignment(path, data)
	if err != nil {
		return WatchOnceView{}, nil, err
	}
	env.Notes.WarnFindings(fs)
	view := WatchOnceView{Path: path}
	if journal != nil {
		if view.Journal, err = journal.Write(a.ControllerEpoch, a.AssignmentVersion, data, sha256.Sum256(data)); err != nil {
			return WatchOnceView{}, nil, fmt.Errorf("journal: %w", err)
		}
	}
	groups := inspect.MatchingGroups(groupsFor(a), filter)
	step := inspect.NextStep(nil, nil, a, groups, filter, env.Now())
	placements := inspect.PlacementsAt(step.State, groups)
	view.Version, view.KnownGroups = step.Version, len(groups)
	view.Coordinators = inspect.CoordinatorCounts(placements, step.Version.Brokers)
	return view, placements, nil
}

// AssignmentJournal is the journal of every version seen in dir (nil
// without one), refused inside the volume dataDir.
func AssignmentJournal(dir, dataDir string, g render.Notes) (*watch.Journal, error) {
	if dir == "" {
		return nil, nil
	}
	if w, err := watch.CheckJournalDir(dir, dataDir); err != nil {
		return nil, exit.Refusedf("%v", err)
	} else if w != "" {
		g.Warnf("%s", w)
	}
	return &watch.Journal{Dir: dir}, nil
}
