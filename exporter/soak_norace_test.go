//go:build !race

package exporter

// soakRefreshes is how many refreshes TestExporterMemorySoak runs by
// default (see soak_race_test.go).
const soakRefreshes = 300
