package repair

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/safefs"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A prune's rollback file (groups prune --export-rollback FILE): JSON
// lines, written and synced before each batch of groups is written. It
// holds every planned group's file as it was, byte for byte, so
// 'groups prune --restore FILE' puts the files back exactly (a removed
// file recreated, a rewritten one restored), whether or not the backups
// beside them are still kept; an outcome line follows each group once it
// is finished, so an interrupted run leaves a record of what was written.

// PruneRollbackFormat names the file's format in its header line.
const PruneRollbackFormat = "kaasctl-prune-rollback"

// Rollback record kinds.
const (
	RollbackHeader  = "header"
	RollbackGroup   = "group"
	RollbackOutcome = "outcome"
)

// RollbackRecord is one line of a prune's rollback file. Field names are
// the on-disk contract.
type RollbackRecord struct {
	Kind string `json:"kind"`
	// Header: Format, Version, Planned, Generation.
	Format     string    `json:"format,omitempty"`
	Version    int       `json:"version,omitempty"`
	Planned    time.Time `json:"planned,omitzero"`
	Generation string    `json:"generation,omitempty"`
	// Group: the file at Path before the prune (Before, its SHA-256 and
	// mode), the action, and the SHA-256 of what the prune writes
	// (AfterSHA256; "" for a removal).
	Group        string `json:"group,omitempty"`
	Path         string `json:"path,omitempty"`
	Action       string `json:"action,omitempty"`
	Mode         uint32 `json:"mode,omitempty"`
	Before       []byte `json:"before,omitempty"`
	BeforeSHA256 string `json:"beforeSha256,omitempty"`
	AfterSHA256  string `json:"afterSha256,omitempty"`
	// Outcome: what became of the group (written, refused, ...), at Time.
	Outcome string    `json:"outcome,omitempty"`
	Time    time.Time `json:"time,omitzero"`
}

// RollbackVersion is written in the header.
const RollbackVersion = 1

// RollbackWriter appends a prune's rollback records to a file, syncing
// after each batch.
type RollbackWriter struct {
	f *os.File
	w *bufio.Writer
}

// NewRollbackWriter starts the rollback file f with its header.
func NewRollbackWriter(f *os.File, planned time.Time, gen volume.GenerationInfo) (*RollbackWriter, error) {
	rw := &RollbackWriter{f: f, w: bufio.NewWriter(f)}
	rw.put(RollbackRecord{Kind: RollbackHeader, Format: PruneRollbackFormat, Version: RollbackVersion, Planned: planned.UTC(), Generation: string(gen.Gen)})
	return rw, rw.Sync()
}

func (rw *RollbackWriter) put(r RollbackRecord) {
	b, _ := json.Marshal(r)
	rw.w.Write(b)
	rw.w.WriteByte('\n')
}

// Plans records each plan that may be written (not refused, no error)
// with its file as it is now, then syncs: called before the plans are
// applied.
func (rw *RollbackWriter) Plans(plans []*GroupPlan) error {
	for _, gp := range plans {
		if gp.Error != "" || gp.Refused != "" || gp.file == nil || !gp.file.State.Exists {
			continue
		}
		st := gp.file.State
		r := RollbackRecord{Kind: RollbackGroup, Group: gp.Group, Path: gp.Path, Action: "rewrite", Mode: uint32(st.Mode), Before: st.Data, BeforeSHA256: sum(st.Data)}
		if gp.Remove {
			r.Action = "remove"
		} else {
			r.AfterSHA256 = sum(EncodeEnvelope(gp.FullSet()))
		}
		rw.put(r)
	}
	return rw.Sync()
}

// Outcome records what became of a group once it is finished.
func (rw *RollbackWriter) Outcome(gp *GroupPlan, at time.Time) error {
	rw.put(RollbackRecord{Kind: RollbackOutcome, Group: gp.Group, Outcome: gp.Outcome, Time: at.UTC()})
	return rw.Sync()
}

// Sync flushes and fsyncs what was recorded.
func (rw *RollbackWriter) Sync() error {
	if err := rw.w.Flush(); err != nil {
		return err
	}
	return rw.f.Sync()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Rollback is a prune's rollback file as read: its header, and the last
// group record and outcome of each group, in the order first recorded.
type Rollback struct {
	Name     string
	Header   RollbackRecord
	Groups   []RollbackRecord
	Outcomes map[string]string
}

// maxRollbackLine bounds one record (a group's whole file, base64).
const maxRollbackLine = 512 << 20

// ReadRollbackFile opens and parses the rollback file groups prune
// --restore names (a file the user names: links followed, never a FIFO);
// a file that cannot be opened is a usage error.
func ReadRollbackFile(name string) (*Rollback, error) {
	f, _, err := safefs.OpenFollow(name)
	if err != nil {
		return nil, exit.UsageErrorf("--restore: %v", err)
	}
	defer f.Close()
	return ParseRollback(f, name)
}

// ParseRollback reads a rollback file's lines from r (name names it in
// errors): a header first, then group and outcome records. A line that is
// not such a record, a group record whose content does not match its
// SHA-256, and a missing header are errors naming the line.
func ParseRollback(r io.Reader, name string) (*Rollback, error) {
	rb := &Rollback{Name: name, Outcomes: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRollbackLine)
	index := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec RollbackRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not a rollback record: %v", name, n, err)
		}
		if err := rb.add(rec, n, index); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if rb.Header.Kind == "" {
		return nil, fmt.Errorf("%s: no %s header: not a groups prune rollback file", name, PruneRollbackFormat)
	}
	return rb, nil
}

func (rb *Rollback) add(rec RollbackRecord, n int, index map[string]int) error {
	if rb.Header.Kind == "" && rec.Kind != RollbackHeader {
		return fmt.Errorf("the first record is %q, not the %s header: not a groups prune rollback file", rec.Kind, PruneRollbackFormat)
	}
	switch rec.Kind {
	case RollbackHeader:
		if rec.Format != PruneRollbackFormat || rec.Version != RollbackVersion || n > 1 && rb.Header.Kind != "" {
			return fmt.Errorf("header of format %q version %d: this kaasctl reads %s version %d, once at the top", rec.Format, rec.Version, PruneRollbackFormat, RollbackVersion)
		}
		rb.Header = rec
	case RollbackGroup:
		switch {
		case rec.Group == "" || rec.Path == "":
			return errors.New("a group record without its group or path")
		case rec.Action != "remove" && rec.Action != "rewrite":
			return fmt.Errorf("group %q: action %q (remove or rewrite)", volume.DisplayName(rec.Group), rec.Action)
		case sum(rec.Before) != rec.BeforeSHA256:
			return fmt.Errorf("group %q: its saved file does not match its SHA-256 (the rollback file was changed or damaged)", volume.DisplayName(rec.Group))
		case rec.Mode&^uint32(fs.ModePerm) != 0:
			return fmt.Errorf("group %q: mode %o is not a permission mode", volume.DisplayName(rec.Group), rec.Mode)
		}
		if i, ok := index[rec.Group]; ok {
			rb.Groups[i] = rec
		} else {
			index[rec.Group] = len(rb.Groups)
			rb.Groups = append(rb.Groups, rec)
		}
	case RollbackOutcome:
		rb.Outcomes[rec.Group] = rec.Outcome
	default:
		return fmt.Errorf("record kind %q (header, group or outcome)", rec.Kind)
	}
	return nil
}

// Restore results of one group.
const (
	RestoreRestored  = "restored"  // written back, verified byte-identical
	RestorePlanned   = "planned"   // dry-run: would be restored
	RestoreUnchanged = "unchanged" // the file is already as it was before the prune
	RestoreRefused   = "refused"   // the file changed since the prune, or the group is live
	RestoreFailed    = "failed"
)

// RestoreItem is one group of a restore and its result.
type RestoreItem struct {
	Group   string `json:"group"`
	Path    string `json:"path"`
	Action  string `json:"action"` // what the prune did: remove | rewrite
	Outcome string `json:"outcome"`
	// PruneOutcome is what the rollback file recorded of the prune.
	PruneOutcome string `json:"pruneOutcome,omitempty"`
	Detail       string `json:"detail"`
	Backup       string `json:"backup,omitempty"`
	rec          RollbackRecord
	cur          FileState
}

// PlanRestore checks each group of rb against the volume: its path must
// be the group's offset file here (a rollback of another volume is
// refused), and the file must be as the prune left it (gone, or what it
// wrote); a file already as before is unchanged.
func PlanRestore(in Inputs, rb *Rollback) []*RestoreItem {
	out := make([]*RestoreItem, 0, len(rb.Groups))
	for _, rec := range rb.Groups {
		it := &RestoreItem{Group: rec.Group, Path: rec.Path, Action: rec.Action, PruneOutcome: rb.Outcomes[rec.Group], Outcome: RestorePlanned, rec: rec}
		out = append(out, it)
		p, err := GroupFilePath(in.Layout, rec.Group)
		switch {
		case err != nil:
			it.Outcome, it.Detail = RestoreRefused, err.Error()
			continue
		case p != rec.Path:
			it.Outcome, it.Detail = RestoreRefused, fmt.Sprintf("the rollback names %s, but the group's offset file on this volume is %s (a rollback of another volume, or this one mounted elsewhere): nothing is restored", rec.Path, p)
			continue
		}
		if err := CheckWritePath(VolumeRoot(in.Layout, p), p, in.Policy); err != nil {
			it.Outcome, it.Detail = RestoreRefused, err.Error()
			continue
		}
		cur, err := readState(p, in.Policy.FollowSymlinks)
		if err != nil {
			it.Outcome, it.Detail = RestoreRefused, err.Error()
			continue
		}
		it.cur = cur
		it.Outcome, it.Detail = restoreVerdict(rec, cur)
	}
	return out
}

func restoreVerdict(rec RollbackRecord, cur FileState) (string, string) {
	switch {
	case cur.Exists && sum(cur.Data) == rec.BeforeSHA256:
		return RestoreUnchanged, "the file is already as it was before the prune"
	case rec.Action == "remove" && !cur.Exists:
		return RestorePlanned, "the prune removed the file: it is recreated as it was"
	case rec.Action == "rewrite" && cur.Exists && sum(cur.Data) == rec.AfterSHA256:
		return RestorePlanned, "the prune rewrote the file: its content before is put back"
	case cur.Exists:
		return RestoreRefused, "the file changed since the prune (a consumer committed to the group, or someone wrote it): restoring would lose that; nothing is restored (the rollback file holds the old content)"
	}
	return RestoreRefused, "the file is gone, but the prune rewrote it, not removed it: someone else removed it since; nothing is restored"
}

// ApplyRestore writes back each planned group (with cl, only when the
// group is not live and its coordinator does not hold it), atomically and
// with a backup of what is there, and verifies the file byte for byte.
func ApplyRestore(ctx context.Context, cl *wire.Client, in Inputs, items []*RestoreItem, now func() time.Time) {
	for _, it := range items {
		if it.Outcome != RestorePlanned {
			continue
		}
		if cl != nil {
			if why := pruneRecheck(ctx, cl, &GroupPlan{Group: it.Group}); why != "" {
				it.Outcome, it.Detail = RestoreRefused, why
				continue
			}
		}
		cur := it.cur
		res, err := WriteFileAtomic(it.Path, it.rec.Before, WriteOptions{Expect: &cur, Backup: true, Perm: fs.FileMode(it.rec.Mode), Now: now,
			Root: VolumeRoot(in.Layout, it.Path), Policy: in.Policy})
		it.Backup = res.Backup
		if err != nil {
			it.Outcome, it.Detail = RestoreFailed, err.Error()
			continue
		}
		after, err := readState(it.Path, in.Policy.FollowSymlinks)
		if err != nil || !after.Exists || sum(after.Data) != it.rec.BeforeSHA256 {
			it.Outcome, it.Detail = RestoreFailed, "the file does not read back as it was before the prune"
			continue
		}
		it.Outcome, it.Detail = RestoreRestored, "restored and verified byte-identical (SHA-256 "+it.rec.BeforeSHA256[:12]+"…)"
		recordRestore(in, it, cur, now())
	}
}

// recordRestore appends a restored file to kaasctl's write log.
func recordRestore(in Inputs, it *RestoreItem, before FileState, at time.Time) {
	rec := WriteRecord{Time: at.UTC(), Command: "groups prune restore", Group: it.Group, Method: "file", File: it.Path, By: whoRuns(), Version: WriteLogVersion,
		Partitions: changedPartitions(it.Path, before.Data, it.rec.Before)}
	if err := AppendWriteLog(in.Layout.WriteLogPath(), VolumeRoot(in.Layout, in.Layout.WriteLogPath()), in.Policy, rec); err != nil {
		it.Detail += fmt.Sprintf("; kaasctl's write log: %v", err)
	}
}
