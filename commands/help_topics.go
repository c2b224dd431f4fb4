package commands

import (
	"github.com/kaasctl/kaasctl/internal/helptext"
	"github.com/kaasctl/kaasctl/internal/when"
)

func init() {
	addHelpTopic("routing", "how kaas picks a group's coordinator (the two tiers, worked example)", nil)
	addHelpTopic("volume", "the kaas shared volume layout kaasctl reads", nil)
	addHelpTopic("durations", "the one grammar of every time, duration and size flag",
		helptext.Vars{"durationForms": when.DurationForms, "timeForms": when.TimeForms, "sizeForms": when.SizeForms})
	addHelpTopic("connection", "how kaasctl reaches the brokers: flags, KAASCTL_* variables, profiles, TLS, SASL, version cap", nil)
}
