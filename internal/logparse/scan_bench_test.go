package logparse

import "testing"

// BenchmarkCandidateScan measures the byte prefilter alone over 100 MB.
func BenchmarkCandidateScan(b *testing.B) {
	d := genLog(100 << 20)
	b.SetBytes(int64(len(d)))
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n = 0
		for off := 0; ; {
			_, e, ok := nextCandidate(d, off)
			if !ok {
				break
			}
			n++
			off = e
		}
	}
	b.ReportMetric(float64(n), "candidates")
}
