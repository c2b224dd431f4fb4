package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
