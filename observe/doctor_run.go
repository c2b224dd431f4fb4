package observe

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// Doctor's checks, in the order they run: the offline ones on the volume
// (DoctorVolumeChecks), then the live ones with the brokers
// (DoctorLiveChecks), each adding its findings to the report and saying
// which ran and why the others did not.

// DoctorVolume is what the offline checks read that the live ones use.
type DoctorVolume struct {
	// Assignment is nil without a volume or when assignment.json is
	// unreadable.
	Assignment *volume.Assignment
	Files      []inspect.GroupFile
	// Logs are the partitions' log bounds the volume check read from their
	// segments, before any broker is asked.
	Logs []volume.LogBounds
	// Flags repeat the volume in a fix's commands (" --data-dir /data").
	Flags string
	// Generation is the kaas generation the volume check assumed.
	Generation volume.GenerationInfo
}

// DoctorVolumeChecks runs the offline checks on l (nil: no volume, they
// are recorded as not run): volume check, the explicit-entry audit and
// overdue transactions, evaluated at now; flags repeat the volume in the
// fixes' commands, progress makes the scan's progress line.
func DoctorVolumeChecks(l *volume.Layout, now time.Time, rep *inspect.DoctorReport, flags string, progress func(string, int64) *render.Progress) (DoctorVolume, error) {
	vol := DoctorVolume{Flags: flags}
	if l == nil {
		for _, n := range []string{inspect.CheckVolume, inspect.CheckEntries, inspect.CheckTxn} {
			rep.Skipped(n, "no volume given (--data-dir or --cluster-dir)")
		}
		return vol, nil
	}
	root := l.ClusterDir
	if l.DataDir != "" {
		root = l.DataDir
	}
	// One scan of the offset files: the volume check's, which also keeps a
	// summary of each for the live checks.
	var prog *render.Progress
	res, err := CheckVolume(*l, now, volume.ScanOptions{
		OnListed: func(n int) {
			vol.Files = make([]inspect.GroupFile, 0, n)
			prog = progress("reading offset files", int64(n))
		},
		OnItem: func(it *volume.OffsetScanItem) {
			vol.Files = append(vol.Files, inspect.SummarizeOffsetItem(it))
			prog.Add(1)
		}})
	prog.Done()
	if err != nil {
		return vol, err
	}
	rep.Summary.Checked = res.Checked
	vol.Logs, vol.Generation = res.LogBounds, res.Generation
	rep.Ran(inspect.CheckVolume, "")
	if res.Assignment == nil { // read once, by the volume check
		rep.Skipped(inspect.CheckEntries, "assignment.json unreadable (see the volume findings)")
	} else {
		vol.Assignment = res.Assignment
		rep.AddEntryAudit(inspect.AuditEntries(vol.Assignment), vol.Flags)
		rep.Ran(inspect.CheckEntries, "")
	}
	rep.AddVolumeFindings(res.Findings, root, vol.Assignment != nil, vol.Flags)
	slots, _, _ := volume.ReadTxnState(*l) // problems are volume findings already
	rep.AddOverdueTxns(inspect.BuildTxnRows(slots, vol.Assignment, now), vol.Flags)
	rep.Ran(inspect.CheckTxn, "evaluated at "+now.Format("2006-01-02T15:04:05Z"))
	return vol, nil
}

// DoctorLive is what the live checks run with: the brokers (Client nil
// when none answered: ConnErr says why; BadSeeds are the seeds that did
// not), the volume (nil: none), the connection flags repeated in the
// fixes' commands, the brokers given, the clock and where warnings go.
type DoctorLive struct {
	// Offline: skipped (--offline); Wanted: brokers were configured.
	Offline, Wanted bool
	Client          *wire.Client
	BadSeeds        []*wire.BrokerError
	ConnErr         error
	Layout          *volume.Layout
	ConnFlags       string
	Brokers         []string
	Now             time.Time
	Notes           render.Notes
}

// DoctorLiveChecks runs the live checks when brokers are configured and
// one answers; otherwise it records why they did not run. It returns the
// brokers asked, as sources, and whether they were (live).
func DoctorLiveChecks(ctx context.Context, in DoctorLive, vol DoctorVolume, rep *inspect.DoctorReport) (brokers []inspect.BrokerSource, live bool, err error) {
	switch {
	case in.Offline:
		rep.Skipped(inspect.CheckLive, "skipped (--offline)")
		return nil, false, nil
	case !in.Wanted:
		rep.Skipped(inspect.CheckLive, "no brokers given (--brokers, KAASCTL_BROKERS or a profile)")
		return nil, false, nil
	}
	rep.AddSeeds(in.BadSeeds, in.ConnFlags)
	if in.ConnErr != nil {
		rep.AddNoBrokerAnswers(in.ConnErr, in.Brokers, len(vol.Files), in.ConnFlags)
		in.Notes.Warnf("no broker answered (%v): offline checks only", in.ConnErr)
		return nil, false, nil
	}
	rep.Mode = inspect.DoctorMerged
	if in.Layout == nil {
		rep.Mode = inspect.DoctorLive
	}
	gi := inspect.GroupsInput{Assignment: vol.Assignment, Files: vol.Files}
	var listed *inspect.ListedRows // the rows, built while the lookups are in flight
	gg, err := in.Client.GatherGroups(ctx, wire.GroupRounds{Extra: inspect.VolumeGroupNames(vol.Files, vol.Assignment), Describe: true,
		OnListed: func(ls []wire.BrokerGroups) { listed = inspect.PrepareListedRows(gi, in.Layout != nil, ls) }})
	if err != nil {
		return nil, false, err
	}
	facts, brokers := inspect.ListedLiveFacts(gg, listed, vol.Assignment)
	rep.AddLive(facts, vol.Flags, in.ConnFlags)
	if in.Layout != nil {
		doctorGroupStates(ctx, in, gg, vol, rep)
	}
	rep.Ran(inspect.CheckLive, "")
	return brokers, true, nil
}

// doctorGroupStates adds what the read model finds in the live state of
// every group a broker coordinates (offsets served but not filed,
// committed past the served end, file and coordinator disagreeing,
// partitions without an offset), and the partitions served below their
// segments.
func doctorGroupStates(ctx context.Context, in DoctorLive, gg *wire.GatheredGroups, vol DoctorVolume, rep *inspect.DoctorReport) {
	gi := in.Layout.Gen
	states, err := LiveStates(ctx, in.Client, gg, *in.Layout, vol.Files, vol.Logs, in.Now)
	if err != nil {
		in.Notes.Warnf("the groups' offset files were not compared with what their coordinators serve: %v", err)
	}
	paths := map[string]string{}
	for _, f := range vol.Files {
		if f.Layout == volume.OffsetsCurrent {
			paths[f.Group] = f.Path
		}
	}
	rep.AddServedNotFiled(inspect.NotFiledOf(states, paths), gi.Gen, vol.Flags, in.ConnFlags)
	rep.AddIncidents(inspect.CollectIncidents(states), gi, vol.Flags, in.ConnFlags)
	behind, err := ServedBehindAll(ctx, in.Client, vol.Logs, vol.Assignment)
	if err != nil {
		in.Notes.Warnf("the partitions' served log ends were not compared with their segments: %v", err)
	}
	rep.AddServedBehindLog(behind, gi, vol.Flags, in.ConnFlags)
}
