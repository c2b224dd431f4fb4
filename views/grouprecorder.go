package views

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// GroupRecorder returns ApplyOptions.Done for a write run: with several
// groups, one line per group on w (stderr) as soon as it is finished ("[3/500]
// group 'g': written ..."), and the same line as a comment in the
// --export-rollback file (synced), so an interrupted run leaves a record
// of which groups were written.
func GroupRecorder(w io.Writer, quiet bool, total int, record *os.File) func(*repair.GroupPlan) {
	if total < 2 && record == nil {
		return nil
	}
	n := 0
	return func(gp *repair.GroupPlan) {
		n++
		line := fmt.Sprintf("[%d/%d] group '%s': %s", n, total, volume.DisplayName(gp.Group), GroupOutcomeText(gp))
		if total >= 2 && !quiet {
			fmt.Fprintf(w, "kaasctl: %s\n", render.Clean(line))
		}
		if record != nil {
			fmt.Fprintf(record, "# %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), render.Clean(line))
			record.Sync()
		}
	}
}
