package commands

import (
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/repair"
)

// insecureFiles are the settings files of this run that others could
// change (config.yaml, the --command-config file), each with why.
func (st *connState) insecureFiles() []string {
	var out []string
	if st != nil && st.cfg != nil && st.cfg.Insecure != "" {
		out = append(out, st.cfg.Insecure)
	}
	if st != nil && st.cc != nil && st.cc.Insecure != "" {
		out = append(out, st.cc.Insecure)
	}
	return out
}

// warnInsecureSettings warns, on every run, about a settings file others
// could change, and about a SASL password file others can read.
func (g *Globals) warnInsecureSettings() {
	for _, why := range g.conn.insecureFiles() {
		g.Warnf("%s: whoever can change it decides the data dir kaasctl writes to, the brokers and which file is read as the SASL password; kaasctl reads it, but refuses to write with settings taken from it (as ssh refuses such a config): chmod go-w the file and its directories", why)
	}
}

// CheckWriteSettings refuses (exit 4) a write that would take a setting
// from a settings file others could change (repair.CheckSettingsOrigin).
func (g *Globals) CheckWriteSettings() error {
	st := g.conn
	return repair.CheckSettingsOrigin(repair.SettingsOrigin{Insecure: st.insecureFiles(), Volume: g.vin, Settings: st.settings,
		ProfileInsecure: st.cfg != nil && st.cfg.Insecure != "", CommandConfigInsecure: st.cc != nil && st.cc.Insecure != ""})
}

// warnPasswordFile warns when the SASL password file can be read by others.
func (g *Globals) warnPasswordFile(s *wire.Settings) {
	if why := s.PasswordFileProblem(); why != "" {
		g.Warnf("%s", why)
	}
}
