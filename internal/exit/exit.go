// Package exit holds kaasctl's typed errors and the exit code each maps to:
// 0 ok, 1 error, 2 usage, 3 the command ran and found problems, 4 refused for
// safety. Any package may return these; cmd/kaasctl turns them into codes.
package exit

import (
	"errors"
	"fmt"
)

const (
	OK       = 0
	Error    = 1
	Usage    = 2
	Problems = 3
	Refused  = 4
)

// CodedError carries an exit code with its message.
type CodedError struct {
	Code int
	Err  error
	// Silent means the command already explained itself on its output;
	// only the code matters.
	Silent bool
}

func (e *CodedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *CodedError) Unwrap() error { return e.Err }

// UsageErrorf is a mistake in how the command was called (exit 2).
func UsageErrorf(format string, a ...any) error {
	return &CodedError{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// ProblemsFound says the command ran to the end and found problems (exit 3).
// The findings are already on the output, so nothing more is printed.
func ProblemsFound(format string, a ...any) error {
	return &CodedError{Code: Problems, Err: fmt.Errorf(format, a...), Silent: true}
}

// Refusedf says the command refused to act for safety (exit 4).
func Refusedf(format string, a ...any) error {
	return &CodedError{Code: Refused, Err: fmt.Errorf(format, a...)}
}

// Code maps any error to kaasctl's exit code.
func Code(err error) int {
	if err == nil {
		return OK
	}
	if ce, ok := errors.AsType[*CodedError](err); ok {
		return ce.Code
	}
	return Error
}

// IsSilent reports whether the error's message was already shown.
func IsSilent(err error) bool {
	ce, ok := errors.AsType[*CodedError](err)
	return ok && ce.Silent
}
