package commands

import (
	"github.com/kaasctl/kaasctl/repair"
)

// warnInsecureSettings warns, on every run, about a settings file others
// could change.
func (g *Globals) warnInsecureSettings() {
	for _, why := range g.conn.InsecureFiles() {
		g.Warnf("%s: whoever can change it decides the data dir kaasctl writes to, the brokers and which file is read as the SASL password; kaasctl reads it, but refuses to write with settings taken from it (as ssh refuses such a config): chmod go-w the file and its directories", why)
	}
}

// CheckWriteSettings refuses (exit 4) a write that would take a setting
// from a settings file others could change (repair.CheckSettingsOrigin).
func (g *Globals) CheckWriteSettings() error {
	st := g.conn
	return repair.CheckSettingsOrigin(repair.SettingsOrigin{Insecure: st.InsecureFiles(), Volume: g.vin, Settings: st.Settings,
		ProfileInsecure: st.Config != nil && st.Config.Insecure != "", CommandConfigInsecure: st.CommandConfig != nil && st.CommandConfig.Insecure != ""})
}
