package exporter

import "io"

// What the tests read of an exporter's state, beside what it serves.

// InFlight is the number of requests being served; Conns the open
// connections.
func (e *Exporter) InFlight() int { return int(e.inFlight.Load()) }
func (e *Exporter) Conns() int    { return int(e.conns.Load()) }

// bytes is the exposition: every family with samples, in declaration
// order (a refresh keeps only its compressed page).
func (w *textWriter) bytes() []byte {
	p := w.page()
	b, err := io.ReadAll(p.text())
	if err != nil {
		panic("exporter: " + err.Error())
	}
	return b
}
