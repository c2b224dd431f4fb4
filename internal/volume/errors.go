package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// FileError is a file kaasctl could not use, with the reason in words.
type FileError struct {
	Path    string
	Problem string
}

func (e *FileError) Error() string { return e.Path + ": " + e.Problem }

// Severity of a Finding.
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevInfo    Severity = "info"
)

// Finding is something odd on the volume, with the fix an operator can apply.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
	// Repeats counts further findings of this code folded into this one
	// (AssignmentOptions.Fold): their messages were never built.
	Repeats int `json:"-"`
}

// describeJSONError turns a decoder error into words an operator can act on.
func describeJSONError(data []byte, err error) string {
	if len(data) == 0 {
		return "file is empty (an interrupted write?)"
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end of JSON input")):
		return fmt.Sprintf("truncated JSON: the file ends after %d bytes in the middle of a value (an interrupted write?)", len(data))
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the top level"
		}
		return fmt.Sprintf("wrong type at byte %d: %s holds a JSON %s, expected %s", typ.Offset, field, typ.Value, typ.Type)
	}
	return "cannot decode JSON: " + err.Error()
}

// namedExamples is how many paths an aggregated finding names.
const namedExamples = 3

// aggregateNames is one finding for paths, odd entries of dir: one's own
// finding (one, with its path) when there is one, else a single finding
// for dir that counts them (many describes them) and names the first few
// in name order, so a directory of 100,000 odd names is one finding, not
// megabytes of them.
func aggregateNames(dir string, paths []string, one Finding, many string) Finding {
	if len(paths) == 1 {
		one.Path = paths[0]
		return one
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	ex := make([]string, 0, namedExamples)
	for _, p := range sorted[:min(len(sorted), namedExamples)] {
		ex = append(ex, DisplayName(filepath.Base(p)))
	}
	more := ""
	if len(sorted) > namedExamples {
		more = fmt.Sprintf(" and %d more", len(sorted)-namedExamples)
	}
	one.Path = dir
	one.Message = fmt.Sprintf("%d %s (%s%s)", len(paths), many, strings.Join(ex, ", "), more)
	return one
}
