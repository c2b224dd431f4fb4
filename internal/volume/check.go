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
	res := &CheckResult{Checked: map[string]int{}, Generation: l.Gen}
	add := func(fs ...Finding) { res.Findings = append(res.Findings, fs...) }
	fileErr := func(code string, fe *FileError, fix string) {
		add(Finding{Severity: SevError, Code: code, Path: fe.Path, Message: fe.Problem, Fix: fix})
	}
	// Assignment.
	var asg *Assignment
	ap := l.AssignmentPath()
	if _, err := os.Stat(ap); errors.Is(err, fs.ErrNotExist) {
		add(Finding{Severity: SevError, Code: CodeAssignmentMissing, Path: ap, Message: "no assignment.json: no controller has written one (or this is not the cluster dir); brokers cannot route any group",
			Fix: "check --cluster-dir/--data-dir; then check that a controller holds the kaas-controller lease"})
	} else {
		res.Checked["assignment"]++
		a, afs, err := ReadAssignment(ap)
		asg = a
		add(afs...)
		if err == nil {
			res.Assignment = a
		} else {
			fixA := "brokers keep their last good assignment until the controller rewrites the file; check the controller's logs"
			if fe, ok := err.(*FileError); ok {
				fileErr(CodeAssignmentUnreadable, fe, fixA)
			} else {
				add(Finding{Severity: SevError, Code: CodeAssignmentUnreadable, Path: ap, Message: err.Error(), Fix: fixA})
			}
		}
	}
	// kaasctl's quarantine dir: a link or a file there is planted (volume
	// repair creates a real directory); repair refuses it, check says so.
	add(writePathFindings(l)...)
	// Partition logs: every log end from the segments, the manifests
	// against it; the offset scan then checks committed offsets beyond it.
	ms, mfs, merrs := ScanManifests(l)
	var lc *LogCheck
	if l.DataDir != "" {
		lc = NewLogCheck(l, ms)
		res.Checked["partitionLogs"] += lc.Partitions
		res.LogBounds = lc.Bounds
	}
	// Offset files, streamed.
	layouts := map[string]string{}
	scan.Now = now
	// Clean files have no findings; odd ones are fully parsed. With partition
	// logs to check against, every file's entries are looked at (and dropped).
	scan.SummaryOnly = lc == nil
	sr, err := ScanOffsets(l, scan, func(it *OffsetScanItem) error {
		res.Checked["offsets"]++
		add(it.Findings...)
		if f, ok := FutureModTime(it.Path, it.ModTime, now, "offset file", "kaas rewrites the file on every commit, so its modification time is when the group last committed: ages from it (last commit, a stalled group) cannot be told"); ok {
			add(f)
		}
		switch {
		case it.Denied:
			fileErr(CodePermissionDenied, it.Err, FixPermissionDenied)
		case it.Linked:
			// The listing reported the link (CodeSymlink).
		case it.Err != nil:
			fileErr(CodeOffsetsCorrupt, it.Err, fixCorrupt)
		}
		if len(it.NameProblems) > 0 {
			sev := SevWarning
			if it.InSubdir {
				add(Finding{Severity: SevWarning, Code: CodeSubdirGroup, Path: it.Path,
					Message: fmt.Sprintf("group %q lives in a sub-directory of the offsets dir: kaas lists only the top level and never creates sub-directories, so its commits fail while clients see success", DisplayName(it.Group)),
					Fix:     "rename the group in its consumers to one without \"/\"; copy the offsets over with 'kaasctl offsets reset --from-file'"})
			}
			add(Finding{Severity: sev, Code: CodeUnroundtrippable, Path: it.Path,
				Message: fmt.Sprintf("group id %q cannot round-trip through kaas: %s", DisplayName(it.Group), strings.Join(it.NameProblems, "; ")),
				Fix:     "use group ids of valid UTF-8, without \"/\", at most 246 bytes"})
		}
		if prev, ok := layouts[it.Group]; ok && prev != it.Layout && prev == OffsetsCurrent && it.Layout != OffsetsUndetermined {
			// Undetermined dirs: the ambiguity finding lists these groups.
			fix := "compare the two with 'kaasctl groups describe'; kaasctl leaves both (" + l.Gen.Assumes() + ")"
			if it.Layout == OffsetsLegacy {
				fix = "compare the two with 'kaasctl groups describe'; 'kaasctl volume repair' keeps the live one and moves the legacy one aside when they agree (" + l.Gen.Assumes() + ")"
			}
			add(Finding{Severity: SevWarning, Code: CodeDuplicateGroupFile, Path: it.Path,
				Message: fmt.Sprintf("group %q has offset files in both offsets dirs; %s brokers read only %s (%s)", DisplayName(it.Group), l.Gen.Label, l.Gen.LiveOffsetsDir, l.Gen.Assumes()),
				Fix:     fix})
		}
		_, seen := layouts[it.Group]
		layouts[it.Group] = it.Layout
		// The file the brokers load (the live dir's; on an undetermined
		// volume the first dir's, which the scan gives first) goes to the
		// read model's check of committed offsets against the log.
		counts := it.Layout == OffsetsCurrent || it.Layout == OffsetsUndetermined && !seen
		if counts && scan.OnCounted != nil && (scan.SkipGroup == nil || !scan.SkipGroup(it.Group)) {
			scan.OnCounted(it, lc.Bound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	add(sr.Findings...)
	// Transactions.
	slots, tfs, terrs := ReadTxnState(l)
	res.Checked["txnSlots"] += len(slots) + len(terrs)
	add(tfs...)
	for _, fe := range terrs {
		fileErr(CodeTxnCorrupt, fe, fixTxnCorrupt)
	}
	pl, pfs, perrs := ReadPlumbing(l, now)
	if gi := l.WithGeneration().Gen; gi.ReaperMayOmitMarkers() {
		fenced := FencedEpochs(pl)
		for _, sf := range slots {
			for _, e := range sf.Entries {
				if e.Reaped(fenced) {
					add(ReapedFinding(sf.Path, e, gi))
				}
			}
		}
	}
	if asg != nil {
		// A marker waiting for a broker that is not alive is never applied.
		for i := range pfs {
			f := &pfs[i]
			if f.Code != CodeMarkerPending {
				continue
			}
			for _, m := range pl.Markers {
				if m.Path != f.Path {
					continue
				}
				if h, listed := asg.Health(m.Target); !listed || h != "alive" {
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
		}
	}
	res.Checked["fences"] += len(pl.Fences)
	res.Checked["markers"] += len(pl.Markers)
	res.Checked["producerIds"] += len(pl.ProducerIDs)
	add(pfs...)
	for _, fe := range perrs {
		code := CodeUnreadableFile
		fix := ""
		switch {
		case strings.Contains(fe.Path, "/"+FencesDir+"/"):
			code, fix = CodeFenceCorrupt, "move the file aside; its broker rewrites it on the next transactional InitProducerId"
			res.Checked["fences"]++
		case strings.Contains(fe.Path, "/"+MarkerQueueDir+"/"):
			code, fix = CodeMarkerCorrupt, "the target broker cannot apply this marker: check its logs; read_committed consumers may stall on the marker's partitions"
			res.Checked["markers"]++
		case strings.Contains(fe.Path, "/"+ProducerIDsDir+"/"):
			code, fix = CodePIDCorrupt, "stop the broker, restore the file from a backup or set nextBlock above every producer id it has handed out (a multiple of 1000)"
			res.Checked["producerIds"]++
		}
		fileErr(code, fe, fix)
	}
	res.Checked["manifests"] += len(ms) + len(merrs)
	if lc != nil {
		add(lc.Finish()...)
	}
	add(mfs...)
	for _, fe := range merrs {
		fileErr(CodeManifestCorrupt, fe, "the partition leader rewrites its manifest; check its logs (offline lag is unknown for this partition)")
	}
	add(TmpFindings(l, now)...)
	add(DeletingDirFindings(l)...)
	return res, nil
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
