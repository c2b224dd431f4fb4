package commands

import (
	"encoding/json"
	"strings"
	"testing"
)

// --shift-by as far as an int64 goes, either way: the sum never wraps; a
// shift past the log end clamps to the end, one before the start to the
// start, each with Kafka's warning.
func TestShiftByOverflowClamps(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t) // g at 5; orders/0 holds [3, 50)
	for _, c := range []struct {
		shift string
		want  int64
		warn  string
	}{
		{"9223372036854775807", 50, "higher than the latest offset (50)"},
		{"9223372036854775000", 50, "higher than the latest offset (50)"},
		{"-9223372036854775808", 3, "lower than the earliest offset (3)"},
		{"+45", 50, ""},
	} {
		r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--shift-by", c.shift, "-o", "json")
		var doc struct {
			Groups []struct {
				Rows []struct {
					New      int64
					Warnings []string
				}
			}
		}
		if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 0 || len(doc.Groups) != 1 || len(doc.Groups[0].Rows) != 1 {
			t.Fatalf("--shift-by %s: exit %d %v\n%s\n%s", c.shift, r.Code, err, r.Out, r.Err)
		}
		row := doc.Groups[0].Rows[0]
		if row.New != c.want || !strings.Contains(strings.Join(row.Warnings, "; "), c.warn) || (c.warn == "" && len(row.Warnings) > 0) {
			t.Errorf("--shift-by %s: new %d warnings %q (want %d, %q)", c.shift, row.New, row.Warnings, c.want, c.warn)
		}
	}
}
