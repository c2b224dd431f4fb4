// Package watchrun is kaasctl watch's runs: following assignment.json
// version by version, every offset file of the live offsets dir and,
// with brokers, the groups' membership, each change told as it happens
// through views' WatchOut.
package watchrun

import (
	"time"

	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// Env is what a watch tells and prints with: its notes and warnings (and
// the findings of what it read), the run's clock, the printer, and
// whether notes are silenced (-q).
type Env struct {
	Notes   observe.Reporter
	Now     func() time.Time
	Printer *render.Printer
	Quiet   bool
}
