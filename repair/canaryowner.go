package repair

import (
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// canaryOwner says, from the group's offset file on the volume of l,
// whether the probe may write a canary id: only a group it created
// (inspect.CanaryFileOwned). A file that cannot be read is left alone.
// On a volume whose live offsets dir cannot be told yet (no group has a
// file: a new cluster), the file is looked for in both generations' dirs.
func CanaryOwner(l volume.Layout) func(group string) (bool, string) {
	return func(group string) (bool, string) {
		gf, err := ReadGroupFile(l, group)
		if err == nil {
			return inspect.CanaryFileOwned(gf.File)
		}
		if _, lerr := l.WithGeneration().LiveOffsetsDir(); lerr == nil {
			return false, "its offset file cannot be read (" + err.Error() + "): left alone"
		}
		for _, gen := range []volume.Generation{volume.GenGo, volume.Gen018} {
			gf, err := ReadGroupFile(l.PinnedTo(gen, "the probe's check of its canary"), group)
			switch {
			case err != nil:
				return false, "its offset file cannot be read (" + err.Error() + "): left alone"
			case gf.File != nil:
				return inspect.CanaryFileOwned(gf.File)
			}
		}
		return true, ""
	}
}
