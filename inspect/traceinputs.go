package inspect

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/logparse"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

type TraceSources struct {
	Snapshots     int            `json:"snapshots"`
	Paths         []string       `json:"paths"`
	Duplicates    []string       `json:"duplicates"`
	Conflicts     []string       `json:"conflicts"`
	Unreadable    []string       `json:"unreadable"`
	Logs          []string       `json:"logs"`
	LogStats      logparse.Stats `json:"logStats"`
	OffsetGroups  int            `json:"offsetFileGroups"`
	LogLinesFound int            `json:"logEvents"`
}

// TraceInputPaths sorts the positional PATHs into assignment sources
// (directories, *.json) and logs, after --assignments and --logs; the
// journal is an assignment source.
func TraceInputPaths(assignments, logPaths, paths []string, journal string) (asg, logs []string) {
	asg, logs = slices.Clone(assignments), slices.Clone(logPaths)
	for _, a := range paths {
		if st, err := os.Stat(a); (err == nil && st.IsDir()) || strings.HasSuffix(a, ".json") {
			asg = append(asg, a)
		} else {
			logs = append(logs, a)
		}
	}
	if journal != "" {
		asg = append(asg, journal)
	}
	return asg, logs
}

// ReadTraceHistory reads the assignment versions, warning of what it skips.
func ReadTraceHistory(g render.Notes, paths, offsetGroups []string) (volume.HistoryResult, TraceSources) {
	hist := volume.LoadAssignmentHistory(paths)
	src := TraceSources{Snapshots: len(hist.Snapshots), Paths: paths, Duplicates: hist.Duplicates, Conflicts: hist.Conflicts, OffsetGroups: len(offsetGroups)}
	for _, p := range hist.Problems {
		g.Warnf("%s: %s (skipped)", p.Path, p.Problem)
		src.Unreadable = append(src.Unreadable, p.Path)
	}
	for _, p := range hist.Conflicts {
		g.Warnf("%s: claims an epoch and version already read with different content (kept the first)", p)
	}
	if len(paths) > 0 && len(hist.Snapshots) == 0 {
		g.Warnf("no readable assignment version among %s", strings.Join(paths, ", "))
	}
	return hist, src
}

// ReadTraceLogs parses the broker logs, recording what was read in src.
func ReadTraceLogs(g render.Notes, stdin io.Reader, progress func(string, int64) *render.Progress, broker string, paths []string, src *TraceSources) ([]logparse.Event, []error) {
	inputs := logInputs(paths, stdin, g)
	if len(inputs) == 0 {
		return nil, nil
	}
	var total int64
	for _, in := range inputs {
		if fi, err := os.Stat(in.Path); err == nil && in.Path != "-" {
			total += fi.Size()
		}
	}
	prog := progress("reading logs (bytes)", total)
	logs, st, logErrs := logparse.ParseAll(inputs, logparse.Options{Broker: broker, OnRead: func(n int) { prog.Add(int64(n)) }})
	prog.Done()
	for _, e := range logErrs {
		g.Warnf("log %v (skipped)", e)
	}
	src.LogStats, src.LogLinesFound = st, len(logs)
	for _, in := range inputs {
		src.Logs = append(src.Logs, in.Path)
	}
	if n := st.Unparsed + st.Binary + st.Overlong; n > 0 {
		g.Warnf("logs: %d lines skipped (%d unreadable key lines, %d with binary data, %d over %d MB)", n, st.Unparsed, st.Binary, st.Overlong, logparse.MaxLine>>20)
	}
	for _, u := range st.UnknownFormat {
		g.Warnf("%s: no line in a known kaas log format (is this a broker log?)", u)
	}
	g.Notef("logs: %d lines in %s, %d controller/coordinator lines", st.Lines, render.Plural(st.Files, "input", "inputs"), len(logs))
	return logs, logErrs
}

// logInputs expands --logs: files, directories (their regular files),
// "-" (stdin, once); a path that cannot be read is skipped with a warning.
func logInputs(paths []string, stdin io.Reader, g render.Notes) []logparse.Input {
	var out []logparse.Input
	readStdin := false
	for _, p := range paths {
		if p == "-" {
			if !readStdin {
				readStdin = true
				out = append(out, logparse.Input{Path: "-", R: stdin})
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			g.Warnf("log %s: %v (skipped)", p, err)
			continue
		}
		if !st.IsDir() {
			out = append(out, logparse.Input{Path: p})
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			g.Warnf("log dir %s: %v (skipped)", p, err)
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, logparse.Input{Path: filepath.Join(p, e.Name())})
			}
		}
	}
	return out
}
