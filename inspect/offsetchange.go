package inspect

import "github.com/kaasctl/kaasctl/internal/anomaly"

// The offset observation and anomaly types live in the leaf package
// internal/anomaly (internal/watch needs them and sits below inspect);
// inspect names them for its callers.
type (
	OffsetObservation = anomaly.Observation
	OffsetAnomaly     = anomaly.Anomaly
	// OffsetReading is an OffsetObservation as a health window keeps it
	// (offsets in a slice sorted by key).
	OffsetReading = anomaly.Reading
)

// Offset anomaly kinds (see internal/anomaly).
const (
	AnomalyRewind   = anomaly.Rewind
	AnomalyVanished = anomaly.Vanished
	AnomalyPlainMap = anomaly.PlainMap
	AnomalyCorrupt  = anomaly.Corrupt
)

// CompareOffsetObservations returns the anomalies between an earlier and a
// later observation of one group's file (anomaly.Compare).
func CompareOffsetObservations(prev, cur OffsetObservation, plainMapIsEmpty bool) []OffsetAnomaly {
	return anomaly.Compare(prev, cur, plainMapIsEmpty)
}
