// Package logparse pulls the few kaas broker log lines that matter for a
// takeover trace out of large logs, fast: controller lease changes,
// published assignment versions, broker-set changes, recomputes and group
// coordinator changes.
//
// Formats understood (detected per line):
//   - kaas Rust, tracing JSON: {"timestamp","level","fields":{"message",...},"target"}
//     (also with the fields flattened to the top level);
//   - kaas Rust, tracing text: "2026-07-23T11:40:02.123456Z  INFO kaas::cluster: message k=v ...",
//     ANSI colours stripped;
//   - kaas Go, slog JSON: {"time","level","msg", flat fields...}, and slog
//     text (time=... level=... msg="..." k=v);
//   - any of these decorated by `kubectl logs --prefix` ("[pod/kaas-1/kaas] "),
//     `--timestamps` (a leading RFC 3339 token), or a leading broker name
//     ("kaas-1 | ", "kaas-1 ").
//
// Lines are only decoded after a cheap byte search finds a key phrase, so
// the bulk of a log (every line that is not about the controller or a
// coordinator change) costs one vectorized scan and no allocation.
package logparse

import (
	"time"
)

// Kind is what a recognized line says.
type Kind string

const (
	// LeaseAcquired: "controller lease acquired" (Rust; epoch, identity) or
	// "controller acquired lease" (Go; broker, epoch).
	LeaseAcquired Kind = "leaseAcquired"
	// LeaseLost: the controller lost, failed to renew, or released its lease.
	LeaseLost Kind = "leaseLost"
	// AssignmentPublished: "controller active: assignment published" (epoch, version).
	AssignmentPublished Kind = "assignmentPublished"
	// BrokerSetChanged: "controller: broker set changed" (prev, cur) or
	// "broker set changed; triggering recompute" (added, removed).
	BrokerSetChanged Kind = "brokerSetChanged"
	// Recompute: "controller recompute" (reason, assignment_version), DEBUG.
	Recompute Kind = "recompute"
	// CoordinatorChange: "group coordinator change" (group, from, to,
	// assignment_version, side gained|lost).
	CoordinatorChange Kind = "coordinatorChange"
	// StaleAssignment: "assignment.json rejected — stale controller epoch"
	// (file_epoch, lease_epoch).
	StaleAssignment Kind = "staleAssignmentRejected"
)

// Format is the log format a line was read in.
type Format string

const (
	FormatRustJSON Format = "rust-json"
	FormatRustText Format = "rust-text"
	FormatGoJSON   Format = "go-json"
	FormatGoText   Format = "go-text"
)

// Event is one recognized log line.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    Kind      `json:"kind"`
	Broker  string    `json:"broker"` // whose log this is ("" when unknown)
	Source  string    `json:"source"` // file name, or "-" for stdin
	Line    int64     `json:"line"`
	Format  Format    `json:"format"`
	Level   string    `json:"level"`
	Message string    `json:"message"`

	Epoch      int64 `json:"epoch"`
	HasEpoch   bool  `json:"hasEpoch"`
	Version    int64 `json:"version"`
	HasVersion bool  `json:"hasVersion"`

	Identity string   `json:"identity,omitempty"` // lease holder named by the line
	Added    []string `json:"added,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Prev     []string `json:"prev,omitempty"`
	Cur      []string `json:"cur,omitempty"`
	Reason   string   `json:"reason,omitempty"`

	Group string `json:"group,omitempty"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
	Side  string `json:"side,omitempty"`
}

// Stats counts what a parse saw.
type Stats struct {
	Files      int   `json:"files"`
	Bytes      int64 `json:"bytes"`
	Lines      int64 `json:"lines"`
	Candidates int64 `json:"candidates"` // lines that passed the byte prefilter
	Events     int64 `json:"events"`
	// Unparsed: lines with a key phrase that could not be read (truncated
	// JSON, an unknown layout); skipped.
	Unparsed int64 `json:"unparsed"`
	// Overlong: lines over MaxLine bytes; skipped.
	Overlong int64 `json:"overlong"`
	// Binary: candidate lines holding NUL bytes; skipped.
	Binary int64 `json:"binary"`
	// UnknownFormat lists inputs none of whose first lines is in a known
	// format (a wrong file?); they are still scanned.
	UnknownFormat []string `json:"unknownFormat"`
}

// Add merges o into s.
func (s *Stats) Add(o Stats) {
	s.Files += o.Files
	s.Bytes += o.Bytes
	s.Lines += o.Lines
	s.Candidates += o.Candidates
	s.Events += o.Events
	s.Unparsed += o.Unparsed
	s.Overlong += o.Overlong
	s.Binary += o.Binary
	s.UnknownFormat = append(s.UnknownFormat, o.UnknownFormat...)
}
