package repair

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// kaasctl's write log: a JSON line per group kaasctl rewrote (an offsets
// reset, delete or restore, a prune and its restore), in the cluster dir
// (volume.Layout.WriteLogPath). A live reset commits through the
// coordinator and leaves no backup beside the file, so without it nothing
// on the volume would tell kaasctl's own writes from a consumer's or
// another tool's; 'groups timeline' reads it to attribute them. Each
// append rewrites the log through WriteFileAtomic (the one write path: no
// link followed, temp file, fsync, rename), keeping the last
// MaxWriteLogRecords lines.

// MaxWriteLogRecords bounds the write log.
const MaxWriteLogRecords = 10000

// WriteRecord is one group kaasctl wrote.
type WriteRecord struct {
	Time time.Time `json:"time"`
	// Command is what wrote it ("offsets reset --to-earliest", "offsets
	// delete", "groups prune", ...).
	Command string `json:"command"`
	Group   string `json:"group"`
	// Method: commit (OffsetCommit to the coordinator), file (the offset
	// file rewritten) or remove (the file removed).
	Method     string           `json:"method"`
	File       string           `json:"file,omitempty"`
	Partitions []WritePartition `json:"partitions"`
	// Failed counts the partitions that failed or did not verify.
	Failed int `json:"failed"`
	// By is who ran it (user@host) and Version the kaasctl that did.
	By      string `json:"by,omitempty"`
	Version string `json:"kaasctlVersion,omitempty"`
}

// WritePartition is one partition of a write: its committed offset before
// and after (-1: none before; removed: deleted).
type WritePartition struct {
	Partition string `json:"partition"`
	Before    int64  `json:"before"`
	After     int64  `json:"after"`
	Removed   bool   `json:"removed,omitempty"`
}

// WriteLogVersion is the version of kaasctl written in each record (set by
// the commands at start).
var WriteLogVersion string

// recordWrite appends the write of gp (a group ApplyOffsets wrote) to the
// write log; a failure is a warning of the group, the write stands.
func recordWrite(gp *GroupPlan, opts ApplyOptions) {
	if gp.Outcome != OutcomeWritten || !gp.Executed || gp.log == "" {
		return
	}
	rec := WriteRecord{Time: opts.Now().UTC(), Command: writeCommand(opts), Group: gp.Group, Method: gp.Method, File: gp.Path, Failed: gp.Failed,
		By: whoRuns(), Version: WriteLogVersion, Partitions: []WritePartition{}}
	if gp.Remove {
		rec.Method = "remove"
	}
	for _, r := range gp.Rows {
		p := WritePartition{Partition: r.Topic + "/" + strconv.Itoa(int(r.Partition)), Before: -1, After: r.New, Removed: r.Delete}
		if r.Current != nil {
			p.Before = *r.Current
		}
		if r.Delete {
			p.After = -1
		}
		rec.Partitions = append(rec.Partitions, p)
	}
	if err := AppendWriteLog(gp.log, gp.root, gp.pol, rec); err != nil {
		gp.Warnings = append(gp.Warnings, fmt.Sprintf("kaasctl's write log %s: %v (the write is done; 'groups timeline' will not name kaasctl as its author)", gp.log, err))
	}
}

// changedPartitions are the partitions whose committed offset differs
// between two contents of an offset file at path (a missing or unreadable
// side has none).
func changedPartitions(path string, before, after []byte) []WritePartition {
	offs := func(data []byte) map[string]int64 {
		m := map[string]int64{}
		if of, _, err := volume.ParseOffsetFile(path, data); err == nil && of != nil {
			for _, e := range of.Entries {
				m[e.Topic+"/"+strconv.Itoa(int(e.Partition))] = e.Offset
			}
		}
		return m
	}
	b, a := offs(before), offs(after)
	out := []WritePartition{}
	for k, v := range a {
		if old, ok := b[k]; !ok || old != v {
			if !ok {
				old = -1
			}
			out = append(out, WritePartition{Partition: k, Before: old, After: v})
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, WritePartition{Partition: k, Before: v, After: -1, Removed: true})
		}
	}
	slices.SortFunc(out, func(x, y WritePartition) int { return strings.Compare(x.Partition, y.Partition) })
	return out
}

// writeCommand names the write for the log.
func writeCommand(opts ApplyOptions) string {
	if opts.What != "" {
		return opts.What
	}
	switch opts.Command {
	case "delete":
		return "offsets delete"
	case "prune":
		return "groups prune"
	}
	return "offsets reset"
}

// whoRuns is user@host of this process ("" when neither is known).
func whoRuns() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	switch {
	case name != "" && host != "":
		return name + "@" + host
	case name != "":
		return name
	}
	return host
}

// AppendWriteLog appends rec to the write log at path (root: the volume
// dir it is checked from), retrying when another kaasctl appended at the
// same time.
func AppendWriteLog(path, root string, pol Policy, rec WriteRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		st, err := readState(path, pol.FollowSymlinks)
		if err != nil {
			return err
		}
		data := keepLastLines(st.Data, MaxWriteLogRecords-1)
		data = append(append(data, line...), '\n')
		_, err = WriteFileAtomic(path, data, WriteOptions{Expect: &st, Root: root, Policy: pol, Perm: 0o644})
		if err == nil || !errors.Is(err, ErrConcurrentWrite) || attempt == 4 {
			return err
		}
	}
}

// keepLastLines is data's last n complete lines (a torn last line is
// dropped).
func keepLastLines(data []byte, n int) []byte {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		return nil
	}
	lines := bytes.Count(data, []byte{'\n'})
	for lines > n {
		i := bytes.IndexByte(data, '\n')
		data = data[i+1:]
		lines--
	}
	return append([]byte(nil), data...)
}

// ReadWriteLog reads the write log of l, keeping group's records ("":
// all) in time order; unreadable lines are warnings. A missing log is
// no records.
func ReadWriteLog(l volume.Layout, group string) ([]WriteRecord, []string, error) {
	path := l.WriteLogPath()
	if path == "" {
		return nil, nil, nil
	}
	st, err := readState(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("kaasctl's write log %s: %w", path, err)
	}
	var out []WriteRecord
	var warns []string
	for n, line := range strings.Split(string(st.Data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r WriteRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Time.IsZero() || r.Group == "" {
			warns = append(warns, fmt.Sprintf("%s:%d: not a write record (skipped)", path, n+1))
			continue
		}
		if group == "" || r.Group == group {
			out = append(out, r)
		}
	}
	return out, warns, nil
}
