package repair

import (
	"os"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// checkRollbackTarget refuses, before anything is planned, an
// --export-rollback FILE that exists: it may be the only record of an
// earlier reset's offsets.
func CheckRollbackTarget(name string, overwrite bool) error {
	if name == "" || overwrite {
		return nil
	}
	if _, err := os.Lstat(name); err == nil {
		return exit.Refusedf("--export-rollback %s exists (the rollback of an earlier reset?): kaasctl does not overwrite it; name another file, or pass --overwrite-rollback to replace it; nothing was written", name)
	}
	return nil
}
