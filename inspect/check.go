package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// CheckSummary counts findings by severity.
type CheckSummary struct {
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Info     int            `json:"info"`
	Checked  map[string]int `json:"checked"`
}

// CheckReport is 'volume check'.
type CheckReport struct {
	ClusterDir string `json:"clusterDir"`
	DataDir    string `json:"dataDir"`
	// Generation is the kaas generation every finding assumes, and why.
	Generation volume.GenerationInfo `json:"generation"`
	Summary    CheckSummary          `json:"summary"`
	Findings   []volume.Finding      `json:"findings"`
}

// SeverityRank orders severities, most serious first.
func SeverityRank(s volume.Severity) int {
	switch s {
	case volume.SevError:
		return 0
	case volume.SevWarning:
		return 1
	}
	return 2
}

// ParseSeverity validates a --severity value (the minimum shown).
func ParseSeverity(s string) (volume.Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "info":
		return volume.SevInfo, nil
	case "warning", "warn":
		return volume.SevWarning, nil
	case "error":
		return volume.SevError, nil
	}
	return "", fmt.Errorf("unknown severity %q (choose info, warning or error)", s)
}

// BuildCheckReport sorts findings (severity, then path, then code), counts
// them, and keeps those at least as serious as min. The summary always
// counts every finding, so a filtered report still says how many errors exist.
func BuildCheckReport(l volume.Layout, r *volume.CheckResult, min volume.Severity) CheckReport {
	rep := CheckReport{ClusterDir: l.ClusterDir, DataDir: l.DataDir, Generation: r.Generation, Summary: CheckSummary{Checked: r.Checked}}
	fs := slices.Clone(r.Findings)
	SortFindings(fs)
	for _, f := range fs {
		switch f.Severity {
		case volume.SevError:
			rep.Summary.Errors++
		case volume.SevWarning:
			rep.Summary.Warnings++
		default:
			rep.Summary.Info++
		}
		if SeverityRank(f.Severity) <= SeverityRank(min) {
			rep.Findings = append(rep.Findings, f)
		}
	}
	return rep
}

// SortFindings orders findings most serious first, then by path and code.
func SortFindings(fs []volume.Finding) {
	slices.SortStableFunc(fs, func(a, b volume.Finding) int {
		if d := SeverityRank(a.Severity) - SeverityRank(b.Severity); d != 0 {
			return d
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Code, b.Code)
	})
}
