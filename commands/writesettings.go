package commands

import (
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
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

// checkWriteSettings refuses (exit 4) a write that would take a setting
// from a settings file others could change: the volume the write goes to,
// the brokers it commits through, the TLS and SASL files it trusts.
func (g *Globals) checkWriteSettings() error {
	files := g.conn.insecureFiles()
	if len(files) == 0 {
		return nil
	}
	var used []string
	for _, gs := range [][]volume.Given{g.vin.DataDirs(), g.vin.ClusterDirs(), g.vin.KaasVersions()} {
		if f := volume.First(gs); f.Origin == volume.OriginProfile {
			used = append(used, f.From)
		}
	}
	s := g.Conn()
	for key, src := range s.Sources {
		if key == wire.KeyTimeout || key == wire.KeyMaxVersions {
			continue // they bound calls; they send nothing anywhere
		}
		if (src.Kind == "profile" && g.conn.cfg != nil && g.conn.cfg.Insecure != "") ||
			(src.Kind == "command-config" && g.conn.cc != nil && g.conn.cc.Insecure != "") {
			used = append(used, key+" (from "+src.String()+")")
		}
	}
	if len(used) == 0 {
		return nil
	}
	slices.Sort(used)
	return exit.Refusedf("refusing to write: %s, and this write would take %s from it; kaasctl does not write with settings someone else could have chosen (a planted data dir, broker or password file). chmod go-w the file and its directories, or give these settings as flags (--data-dir, --brokers, ...); nothing was written",
		strings.Join(files, "; "), strings.Join(used, ", "))
}

// warnPasswordFile warns when the SASL password file can be read by others.
func (g *Globals) warnPasswordFile(s *wire.Settings) {
	if why := s.PasswordFileProblem(); why != "" {
		g.Warnf("%s", why)
	}
}
