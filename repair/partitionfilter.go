package repair

import (
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// PartitionFilter reads --partition values (TOPIC/P, TOPIC:0,2 or
// TOPIC) into a test of an offset key (TOPIC/P); none keeps every key.
func PartitionFilter(vals []string) (func(string) bool, error) {
	if len(vals) == 0 {
		return func(string) bool { return true }, nil
	}
	var scopes []TopicScope
	for _, v := range vals {
		if t, p, err := volume.SplitOffsetKey(v); err == nil && !strings.Contains(v, ":") {
			scopes = append(scopes, TopicScope{Topic: t, Partitions: []int32{p}})
			continue
		}
		s, err := ParseTopicScope(v)
		if err != nil {
			return nil, exit.UsageErrorf("--partition %q: use TOPIC/P, TOPIC:0,2 or TOPIC", v)
		}
		scopes = append(scopes, s)
	}
	return func(k string) bool {
		t, p, err := volume.SplitOffsetKey(k)
		if err != nil {
			return false
		}
		for _, s := range scopes {
			if s.Topic == t && (s.Partitions == nil || slices.Contains(s.Partitions, p)) {
				return true
			}
		}
		return false
	}, nil
}
