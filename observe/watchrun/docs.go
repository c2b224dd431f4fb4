package watchrun

import (
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// WatchView is what `watch` saw of assignment.json (-o json, yaml: printed
// when the watch ends; jsonl streams its events).
type WatchView struct {
	Path     string                 `json:"path"`
	Versions []inspect.TraceVersion `json:"versions"`
	Events   []inspect.TraceEvent   `json:"events"`
	Problems []string               `json:"problems"`
	// MissedVersions counts the versions written and replaced between two
	// reads (versions are consecutive): each is named in its version's gap.
	MissedVersions int64 `json:"missedVersions"`
}

// WatchOnceView is `watch --once`: the current version, how many groups
// it places and on which brokers, and where it was journaled.
type WatchOnceView struct {
	Path         string                     `json:"path"`
	Version      inspect.TraceVersion       `json:"version"`
	KnownGroups  int                        `json:"knownGroups"`
	Coordinators []inspect.BrokerGroupCount `json:"coordinators"`
	Journal      string                     `json:"journal"`
}

// OffsetWatchEvent is one change as printed by `watch --offsets` (-o jsonl
// streams them; -o json lists them).
type OffsetWatchEvent = watch.OffsetChange

// WatchOffsetsView is what `watch --offsets` saw of the offset files (and,
// with brokers, of the groups' membership).
type WatchOffsetsView struct {
	Dir        string             `json:"dir"`
	Generation string             `json:"generation"`
	Journal    string             `json:"journal"`
	Files      int                `json:"files"`
	Events     []OffsetWatchEvent `json:"events"`
	Anomalies  int                `json:"anomalies"`
	Problems   []string           `json:"problems"`
	// Members are the membership events (with brokers).
	Members []MemberWatchEvent `json:"members"`
}

// MemberWatchEvent is a membership event as watch prints it (-o jsonl:
// one per line, among the offset changes; kind members or condition).
type MemberWatchEvent struct {
	Time      time.Time                 `json:"time"`
	Group     string                    `json:"group"`
	Kind      string                    `json:"kind"`
	Change    *inspect.MembershipChange `json:"change,omitempty"`
	Condition string                    `json:"condition,omitempty"`
	Entered   bool                      `json:"entered,omitempty"`
	Detail    string                    `json:"detail"`
}
