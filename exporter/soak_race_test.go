//go:build race

package exporter

// soakRefreshes is how many refreshes TestExporterMemorySoak runs by
// default. Under the race detector each refresh costs about ten times as
// much, so the race run measures fewer (still four heap samples after the
// warm-up); the run without -race ('go test ./exporter') does them all.
const soakRefreshes = 140
