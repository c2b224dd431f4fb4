package repair

import (
	"regexp"
	"strings"
	"testing"
)

// validTopic is Kafka's topic rule, as the regular expression spells it
// (kept out of the package: its {1,249} compiles to thousands of
// instructions at every start).
func TestValidTopicIsKafkasRule(t *testing.T) {
	t.Parallel()
	rule := regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)
	for _, name := range []string{"", "orders", "a.b_c-D9", strings.Repeat("x", 249), strings.Repeat("x", 250),
		"with space", "slash/topic", "ünicode", "tab\t", "..", "-", "x\n", "a,b", "émoji🙂", "UPPER_lower.123"} {
		if got, want := validTopic(name), rule.MatchString(name); got != want {
			t.Errorf("validTopic(%q) = %v, the rule says %v", name, got, want)
		}
	}
}
