package render

import (
	"strings"
	"testing"
	"time"
)

type fieldsInner struct {
	Topic string `json:"topic"`
	Lag   *int64 `json:"lag,omitempty"`
}

type fieldsView struct {
	Group    string                 `json:"group"`
	When     time.Time              `json:"when"`
	Parts    []fieldsInner          `json:"partitions"`
	ByTopic  map[string]fieldsInner `json:"byTopic"`
	Skip     string                 `json:"-"`
	internal int
}

func TestFields(t *testing.T) {
	t.Parallel()
	var got []string
	for _, f := range Fields([]fieldsView{}) {
		got = append(got, f.Path+" ("+f.Kind+")")
	}
	want := []string{
		"[]group (string)", "[]when (string (RFC 3339 time))", "[]partitions (array of object)",
		"[]partitions[].topic (string)", "[]partitions[].lag (integer, optional)",
		"[]byTopic (object of object)", "[]byTopic{}.topic (string)", "[]byTopic{}.lag (integer, optional)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
