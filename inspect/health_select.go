package inspect

import (
	"fmt"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// MissingError names the groups asked for that the evaluation does not
// hold, grouped by why (the coverage: what it observes).
func (cover HealthCoverage) MissingError(missing []string) error {
	var whys []string
	byWhy := map[string][]string{}
	for _, n := range missing {
		w := cover.WhyMissing(n)
		if byWhy[w] == nil {
			whys = append(whys, w)
		}
		byWhy[w] = append(byWhy[w], n)
	}
	parts := make([]string, len(whys))
	for i, w := range whys {
		parts[i] = QuoteList(byWhy[w]) + " (" + w + ")"
	}
	return fmt.Errorf("not observed: %s", strings.Join(parts, "; "))
}

// HealthOptionsFor is how health judges a volume of generation gen: a
// plain map is a hazard only on a volume known to be 0.2.18 (its brokers
// read it as empty); minSpan is --stop-after.
func HealthOptionsFor(gen volume.Generation, minSpan time.Duration) HealthOptions {
	return HealthOptions{PlainMapIsEmpty: gen.Known() && !gen.PlainMapIsOffsets(), MinSpan: minSpan}
}
