package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// More finding codes used by CheckVolume.
const (
	CodeAssignmentUnreadable = "assignment.unreadable"
	CodeAssignmentMissing    = "assignment.missing"
	CodeUnreadableFile       = "volume.unreadableFile"
	// CodeQuarantineNotDir: CD/.kaasctl-quarantine is a link or a file.
	CodeQuarantineNotDir = "volume.quarantineNotDir"
)

// CheckResult is everything CheckVolume found.
type CheckResult struct {
	Findings []Finding `json:"findings"`
	// Checked counts the files kaasctl read, by kind.
	Checked map[string]int `json:"checked"`
	// Generation is the kaas generation the findings assume, and why.
	Generation GenerationInfo `json:"generation"`
	// LogBounds are the partitions' log bounds as the check read them from
	// their segments (LogCheck.Bounds), for checks made after it (doctor
	// compares what the brokers serve with them).
	LogBounds []LogBounds `json:"-"`
	// Assignment is assignment.json as the check read it (nil when it is
	// missing or unreadable), for checks made after it.
	Assignment *Assignment `json:"-"`
}

// CheckVolume reads every file kaasctl understands and returns all findings.
// It never stops at a bad file; each problem becomes a finding. It holds no
// offset file content (the scan streams).
func CheckVolume(l Layout, now time.Time, scan ScanOptions) (*CheckResult, error) {
	if now.IsZero() {
		now = time.Now()
	}
	l = l.WithGeneration()
	c := &volumeCheck{l: l, now: now, res: &CheckResult{Checked: map[string]int{}, Generation: l.Gen}}
	c.assignment()
	// kaasctl's quarantine dir: a link or a file there is planted (volume
	// repair creates a real directory); repair refuses it, check says so.
	c.add(writePathFindings(l)...)
	// Partition logs: every log end from the segments, the manifests
	// against it; the offset scan then checks committed offsets beyond it.
	ms, mfs, merrs := ScanManifests(l)
	if l.DataDir != "" {
		c.lc = NewLogCheck(l, ms)
		c.res.Checked["partitionLogs"] += c.lc.Partitions
		c.res.LogBounds = c.lc.Bounds
	}
	if err := c.offsets(scan); err != nil {
		return nil, err
	}
	c.transactions()
	c.res.Checked["manifests"] += len(ms) + len(merrs)
	if c.lc != nil {
		c.add(c.lc.Finish()...)
	}
	c.add(mfs...)
	for _, fe := range merrs {
		c.fileErr(CodeManifestCorrupt, fe, "the partition leader rewrites its manifest; check its logs (offline lag is unknown for this partition)")
	}
	c.add(TmpFindings(l, now)...)
	c.add(DeletingDirFindings(l)...)
	return c.res, nil
}

// volumeCheck is one run of CheckVolume: the layout and clock it checks
// against, what it has read so far that later checks depend on (the
// assignment, the partitions' log bounds, each group's offsets dir), and
// the result the findings are appended to in the order they are found.
type volumeCheck struct {
	l   Layout
	now time.Time
	res *CheckResult
	// asg is assignment.json as read, even when it had findings (nil when
	// it is missing or could not be read at all).
	asg *Assignment
	// lc checks committed offsets and manifests against the segments; nil
	// without a data dir.
	lc *LogCheck
	// roles is each group's offsets dir role, from the file seen first.
	roles map[string]string
}

// add appends findings to the result.
func (c *volumeCheck) add(fs ...Finding) { c.res.Findings = append(c.res.Findings, fs...) }

// fileErr adds a file that could not be read as an error finding with the
// given code and fix.
func (c *volumeCheck) fileErr(code string, fe *FileError, fix string) {
	c.add(Finding{Severity: SevError, Code: code, Path: fe.Path, Message: fe.Problem, Fix: fix})
}

// assignment reads assignment.json: missing, unreadable, or read with its
// findings. Later checks use what was read (a marker's target's health).
func (c *volumeCheck) assignment() {
	ap := c.l.AssignmentPath()
	if _, err := os.Stat(ap); errors.Is(err, fs.ErrNotExist) {
		c.add(Finding{Severity: SevError, Code: CodeAssignmentMissing, Path: ap, Message: "no assignment.json: no controller has written one (or this is not the cluster dir); brokers cannot route any group",
			Fix: "check --cluster-dir/--data-dir; then check that a controller holds the kaas-controller lease"})
		return
	}
	c.res.Checked["assignment"]++
	a, afs, err := ReadAssignment(ap)
	c.asg = a
	c.add(afs...)
	if err == nil {
		c.res.Assignment = a
		return
	}
	fixA := "brokers keep their last good assignment until the controller rewrites the file; check the controller's logs"
	if fe, ok := err.(*FileError); ok {
		c.fileErr(CodeAssignmentUnreadable, fe, fixA)
	} else {
		c.add(Finding{Severity: SevError, Code: CodeAssignmentUnreadable, Path: ap, Message: err.Error(), Fix: fixA})
	}
}

// offsets streams every offset file through the scan: each file's own
// findings, its name and its twin in the other offsets dir, and the file
// the brokers load handed to scan.OnCounted with the log bounds.
func (c *volumeCheck) offsets(scan ScanOptions) error {
	c.roles = map[string]string{}
	scan.Now = c.now
	// Clean files have no findings; odd ones are fully parsed. With partition
	// logs to check against, every file's entries are looked at (and dropped).
	scan.SummaryOnly = c.lc == nil
	sr, err := ScanOffsets(c.l, scan, func(it *OffsetScanItem) error {
		c.offsetFile(it)
		_, seen := c.roles[it.Group]
		c.roles[it.Group] = it.Layout
		// The file the brokers load (the live dir's; on an undetermined
		// volume the first dir's, which the scan gives first) goes to the
		// read model's check of committed offsets against the log.
		counts := it.Layout == OffsetsCurrent || it.Layout == OffsetsUndetermined && !seen
		if counts && scan.OnCounted != nil && (scan.SkipGroup == nil || !scan.SkipGroup(it.Group)) {
			scan.OnCounted(it, c.lc.Bound)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.add(sr.Findings...)
	return nil
}

// offsetFile adds one scanned offset file's findings: the scan's own, a
// modification time in the future, a file that could not be read, a group
// id kaas cannot round-trip, and a second file of the group in the other
// offsets dir.
func (c *volumeCheck) offsetFile(it *OffsetScanItem) {
	c.res.Checked["offsets"]++
	c.add(it.Findings...)
	if f, ok := FutureModTime(it.Path, it.ModTime, c.now, "offset file", "kaas rewrites the file on every commit, so its modification time is when the group last committed: ages from it (last commit, a stalled group) cannot be told"); ok {
		c.add(f)
	}
	switch {
	case it.Denied:
		c.fileErr(CodePermissionDenied, it.Err, FixPermissionDenied)
	case it.Linked:
		// The listing reported the link (CodeSymlink).
	case it.Err != nil:
		c.fileErr(CodeOffsetsCorrupt, it.Err, fixCorrupt)
	}
	if len(it.NameProblems) > 0 {
		if it.InSubdir {
			c.add(Finding{Severity: SevWarning, Code: CodeSubdirGroup, Path: it.Path,
				Message: fmt.Sprintf("group %q lives in a sub-directory of the offsets dir: kaas lists only the top level and never creates sub-directories, so its commits fail while clients see success", DisplayName(it.Group)),
				Fix:     "rename the group in its consumers to one without \"/\"; copy the offsets over with 'kaasctl offsets reset --from-file'"})
		}
		c.add(Finding{Severity: SevWarning, Code: CodeUnroundtrippable, Path: it.Path,
			Message: fmt.Sprintf("group id %q cannot round-trip through kaas: %s", DisplayName(it.Group), strings.Join(it.NameProblems, "; ")),
			Fix:     "use group ids of valid UTF-8, without \"/\", at most 246 bytes"})
	}
	if prev, ok := c.roles[it.Group]; ok && prev != it.Layout && prev == OffsetsCurrent && it.Layout != OffsetsUndetermined {
		c.duplicateFile(it)
	}
}

// duplicateFile adds the warning for a group whose file in the live dir
// was seen before this one in the legacy dir. Undetermined dirs are left
// out: the ambiguity finding lists those groups.
func (c *volumeCheck) duplicateFile(it *OffsetScanItem) {
	gen := c.l.Gen
	fix := "compare the two with 'kaasctl groups describe'; kaasctl leaves both (" + gen.Assumes() + ")"
	if it.Layout == OffsetsLegacy {
		fix = "compare the two with 'kaasctl groups describe'; 'kaasctl volume repair' keeps the live one and moves the legacy one aside when they agree (" + gen.Assumes() + ")"
	}
	c.add(Finding{Severity: SevWarning, Code: CodeDuplicateGroupFile, Path: it.Path,
		Message: fmt.Sprintf("group %q has offset files in both offsets dirs; %s brokers read only %s (%s)", DisplayName(it.Group), gen.Label, gen.LiveOffsetsDir, gen.Assumes()),
		Fix:     fix})
}

// transactions reads the transaction slots and the producer plumbing
// (fences, marker queues, producer id blocks): corrupt files, entries the
// reaper aborted without markers, and markers nothing will apply.
func (c *volumeCheck) transactions() {
	slots, tfs, terrs := ReadTxnState(c.l)
	c.res.Checked["txnSlots"] += len(slots) + len(terrs)
	c.add(tfs...)
	for _, fe := range terrs {
		c.fileErr(CodeTxnCorrupt, fe, fixTxnCorrupt)
	}
	pl, pfs, perrs := ReadPlumbing(c.l, c.now)
	if gi := c.l.WithGeneration().Gen; gi.ReaperMayOmitMarkers() {
		fenced := FencedEpochs(pl)
		for _, sf := range slots {
			for _, e := range sf.Entries {
				if e.Reaped(fenced) {
					c.add(ReapedFinding(sf.Path, e, gi))
				}
			}
		}
	}
	if c.asg != nil {
		for i := range pfs {
			if pfs[i].Code == CodeMarkerPending {
				c.pendingMarker(&pfs[i], pl.Markers)
			}
		}
	}
	c.res.Checked["fences"] += len(pl.Fences)
	c.res.Checked["markers"] += len(pl.Markers)
	c.res.Checked["producerIds"] += len(pl.ProducerIDs)
	c.add(pfs...)
	for _, fe := range perrs {
		c.plumbingError(fe)
	}
}

// pendingMarker turns a pending marker's finding into a warning when its
// target broker is not alive in assignment.json: a marker waiting for a
// broker that is not alive is never applied.
func (c *volumeCheck) pendingMarker(f *Finding, markers []*Marker) {
	for _, m := range markers {
		if m.Path != f.Path {
			continue
		}
		h, listed := c.asg.Health(m.Target)
		if listed && h == "alive" {
			continue
		}
		f.Severity = SevWarning
		state := "not in assignment.json"
		if listed {
			state = "health " + strconv.Quote(h)
		}
		f.Message += fmt.Sprintf("; %s is %s, so nothing applies this marker until it returns", m.Target, state)
		if f.Fix == "" {
			f.Fix = fmt.Sprintf("bring %s back (it applies its inbox on start); read_committed consumers of the marker's partitions stall until then", m.Target)
		}
	}
}

// plumbingKinds names, per producer plumbing dir, the finding a file there
// that cannot be read becomes, its fix, and the count it adds to.
var plumbingKinds = []struct{ dir, code, fix, checked string }{
	{FencesDir, CodeFenceCorrupt, "move the file aside; its broker rewrites it on the next transactional InitProducerId", "fences"},
	{MarkerQueueDir, CodeMarkerCorrupt, "the target broker cannot apply this marker: check its logs; read_committed consumers may stall on the marker's partitions", "markers"},
	{ProducerIDsDir, CodePIDCorrupt, "stop the broker, restore the file from a backup or set nextBlock above every producer id it has handed out (a multiple of 1000)", "producerIds"},
}

// plumbingError adds a producer plumbing file that could not be read, as
// the finding of the dir it is in (an unreadable file outside them).
func (c *volumeCheck) plumbingError(fe *FileError) {
	code, fix := CodeUnreadableFile, ""
	for _, k := range plumbingKinds {
		if strings.Contains(fe.Path, "/"+k.dir+"/") {
			code, fix = k.code, k.fix
			c.res.Checked[k.checked]++
			break
		}
	}
	c.fileErr(code, fe, fix)
}

// writePathFindings are the directories of the volume its writes refuse to
// go through: a quarantine dir that is not kaasctl's own directory, and a
// link between the data dir and the cluster dir (DATA/__cluster; writes
// are checked from the data dir down).
func writePathFindings(l Layout) []Finding {
	var out []Finding
	if f := quarantineFinding(filepath.Join(l.ClusterDir, QuarantineDirName)); f != nil {
		out = append(out, *f)
	}
	for _, p := range l.LinkedVolumeDirs() {
		out = append(out, *linkedDirFinding(p, "the cluster dir"))
	}
	return out
}

// QuarantineDirName is the directory in the cluster dir where volume repair
// and volume migrate set files aside (one fresh sub-directory per run).
const QuarantineDirName = ".kaasctl-quarantine"

// quarantineFinding reports a quarantine dir that is not a directory of its
// own: a symbolic link (which would send a root-run repair's files
// wherever it points) or another kind of file.
func quarantineFinding(p string) *Finding {
	st, err := os.Lstat(p)
	if err != nil || st.IsDir() {
		return nil
	}
	what := "is a " + safefs.Kind(st.Mode())
	if st.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(p)
		what = "is a symbolic link (to " + to + ")"
	}
	return &Finding{Severity: SevWarning, Code: CodeQuarantineNotDir, Path: p,
		Message: what + ", not the directory kaasctl creates: nobody but kaasctl should make it, so it may have been planted to redirect a repair's files; 'volume repair' and 'volume migrate' refuse to use it",
		Fix:     "look at who made it (ls -l), remove it, and run the repair again (it creates the directory itself)"}
}
