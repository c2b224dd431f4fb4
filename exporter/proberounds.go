package exporter

import (
	"context"
	"time"
)

// ProbeRounds probes count times, interval apart ('kaasctl probe'); only
// the first round is told of in.Unreached. On an error or the end of ctx
// it returns the rounds done so far.
func ProbeRounds(ctx context.Context, in ProbeInput, count int, interval time.Duration) ([]*ProbeReport, error) {
	reps := []*ProbeReport{}
	tick := time.NewTicker(max(interval, time.Millisecond))
	defer tick.Stop()
	unreached := in.Unreached
	for i := range count {
		if i > 0 {
			select {
			case <-ctx.Done():
				return reps, ctx.Err()
			case <-tick.C:
			}
		}
		in.Unreached = nil
		if i == 0 {
			in.Unreached = unreached
		}
		rep, err := Probe(ctx, in)
		if err != nil {
			return reps, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// SkippedCanaries is, once each, which canary ids the probe left alone
// (groups of that name kaasctl did not create).
func SkippedCanaries(reps []*ProbeReport) []string {
	var out []string
	seen := map[string]bool{}
	for _, rep := range reps {
		for _, b := range rep.Brokers {
			for _, s := range b.Skipped {
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}
