package render

// Notes is where a command says what it does (notes) and what the
// operator should know (warnings), on stderr and in order: the package
// doing the work tells it, the command's Globals print it (or -q silences
// it). A progress line is NewProgress's.
type Notes interface {
	Notef(format string, a ...any)
	Warnf(format string, a ...any)
}
