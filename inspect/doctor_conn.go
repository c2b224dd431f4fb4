package inspect

import (
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Doctor's connection findings and its record of which checks ran.

// Doctor modes: which sources the report covers.
const (
	DoctorOffline = "offline" // the volume only
	DoctorLive    = "live"    // the brokers only
	DoctorMerged  = "merged"  // both
)

// Ran records a check that ran; note says how (may be "").
func (r *DoctorReport) Ran(check, note string) {
	r.Checks = append(r.Checks, CheckRun{Name: check, Ran: true, Note: note})
}

// Skipped records a check that did not run and why.
func (r *DoctorReport) Skipped(check, why string) {
	r.Checks = append(r.Checks, CheckRun{Name: check, Note: why})
}

// AddSeeds reports the seed brokers that did not answer while another
// did: a warning each, whose fix depends on whether the broker accepted
// the connection (Silent: hung, overloaded, or a TLS port).
func (r *DoctorReport) AddSeeds(bad []*wire.BrokerError, brokerFlags string) {
	for _, b := range bad {
		f := DoctorFinding{Severity: volume.SevWarning, Check: CheckLive, Code: DocSeedUnreachable,
			Subjects: []string{b.Broker}, Message: "seed " + b.Error(),
			Fix:      "if that broker was removed on purpose, drop it from --brokers/KAASCTL_BROKERS/the profile; otherwise check its pod and logs",
			Commands: []string{"kaasctl config check" + brokerFlags}}
		if b.Silent {
			f.Code = DocSeedSilent
			f.Fix = "the broker accepts connections but does not answer: it may be hung or overloaded (check its pod and logs; a restart of that broker is the usual cure), or the port expects TLS (--tls); raise --timeout if it is only slow"
		}
		r.Add(f)
	}
}

// AddNoBrokerAnswers reports that no seed answered (err says why): the
// report is offline only, and every known group (groups, at least 1) is
// affected.
func (r *DoctorReport) AddNoBrokerAnswers(err error, seeds []string, groups int, brokerFlags string) {
	r.Skipped(CheckLive, "no broker answered: offline checks only")
	r.Add(DoctorFinding{Severity: volume.SevError, Check: CheckLive, Code: DocNoBrokerAnswers,
		Subjects: seeds, BlastRadius: max(groups, 1),
		Message:  "no broker answered: " + err.Error(),
		Fix:      "check the address, TLS and SASL settings ('kaasctl config check'), then the pods (kubectl get pods -l app=kaas); the report below is offline only",
		Commands: []string{"kaasctl config check" + brokerFlags}})
}

// AtLeast is the findings of severity min or worse, in rank order (call
// after Finish).
func (r *DoctorReport) AtLeast(min volume.Severity) []DoctorFinding {
	out := make([]DoctorFinding, 0, len(r.Findings))
	for _, f := range r.Findings {
		if SeverityRank(f.Severity) <= SeverityRank(min) {
			out = append(out, f)
		}
	}
	return out
}
