package repair

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// What a writing command settles before it plans: the write policy its
// flags and environment ask (PolicyOf), whether its settings may be
// trusted (CheckSettingsOrigin), the volume and brokers it writes through
// (WriteTarget) and the groups it names (WriteGroups).

// KeepBackupsEnv is the environment variable of --keep-backups.
const KeepBackupsEnv = "KAASCTL_KEEP_BACKUPS"

// PolicyOf is the write policy of --follow-symlinks (follow) and the
// backups kept: --keep-backups when given (keepGiven), else env (the
// value of KAASCTL_KEEP_BACKUPS) when set, else the default; 0 keeps all.
func PolicyOf(follow bool, keep int, keepGiven bool, env string) (Policy, error) {
	pol := Policy{FollowSymlinks: follow}
	src := "--keep-backups"
	switch {
	case keepGiven:
	case env != "":
		var err error
		if keep, err = strconv.Atoi(strings.TrimSpace(env)); err != nil {
			return pol, exit.UsageErrorf("%s=%q: a number of backups (0 keeps all)", KeepBackupsEnv, env)
		}
		src = KeepBackupsEnv
	default:
		return pol, nil
	}
	switch {
	case keep < 0:
		return pol, exit.UsageErrorf("%s %d: a number of backups, 0 or more (0 keeps all)", src, keep)
	case keep == 0:
		pol.KeepBackups = -1
	default:
		pol.KeepBackups = keep
	}
	return pol, nil
}

// SettingsOrigin is where a write's settings came from.
type SettingsOrigin struct {
	// Insecure are the settings files of the run that others could change
	// (config.yaml, the --command-config file), each with why.
	Insecure []string
	// Volume is how the volume was named; Settings the connection.
	Volume   volume.ResolveInput
	Settings *wire.Settings
	// ProfileInsecure: the config file holding the profile is one of
	// them; CommandConfigInsecure: the --command-config file is.
	ProfileInsecure, CommandConfigInsecure bool
}

// CheckSettingsOrigin refuses (exit 4) a write that would take a setting
// from a settings file others could change: the volume the write goes
// to, the brokers it commits through, the TLS and SASL files it trusts.
func CheckSettingsOrigin(so SettingsOrigin) error {
	if len(so.Insecure) == 0 {
		return nil
	}
	var used []string
	for _, gs := range [][]volume.Given{so.Volume.DataDirs(), so.Volume.ClusterDirs(), so.Volume.KaasVersions()} {
		if f := volume.First(gs); f.Origin == volume.OriginProfile {
			used = append(used, f.From)
		}
	}
	for key, src := range so.Settings.Sources {
		if key == wire.KeyTimeout || key == wire.KeyMaxVersions {
			continue // they bound calls; they send nothing anywhere
		}
		if (src.Kind == "profile" && so.ProfileInsecure) || (src.Kind == "command-config" && so.CommandConfigInsecure) {
			used = append(used, key+" (from "+src.String()+")")
		}
	}
	if len(used) == 0 {
		return nil
	}
	slices.Sort(used)
	return exit.Refusedf("refusing to write: %s, and this write would take %s from it; kaasctl does not write with settings someone else could have chosen (a planted data dir, broker or password file). chmod go-w the file and its directories, or give these settings as flags (--data-dir, --brokers, ...); nothing was written",
		strings.Join(so.Insecure, "; "), strings.Join(used, ", "))
}

// WriteEnv is what WriteTarget asks of its caller besides WriteConn: the
// volume named, its layout, the settings check, and how to name the kaas
// generation the write assumes.
type WriteEnv interface {
	WriteConn
	HasVolume() bool
	Layout() (volume.Layout, error)
	CheckWriteSettings() error
	GenerationNote(l volume.Layout) string
}

// WriteTarget resolves the volume a write goes to (its settings checked
// first when it executes), says which offsets dir and generation it
// assumes, and connects as ConnectForWrite does; the caller closes the
// client (nil offline).
func WriteTarget(ctx context.Context, g WriteEnv, execute, offline, force bool) (volume.Layout, *wire.Client, error) {
	if execute {
		if err := g.CheckWriteSettings(); err != nil {
			return volume.Layout{}, nil, err
		}
	}
	l, err := g.Layout()
	if err != nil {
		if g.HasBrokers() && !g.HasVolume() {
			return volume.Layout{}, nil, exit.UsageErrorf("%v\nkaasctl needs the kaas volume even with --bootstrap-server: a kaas coordinator that has not loaded a group rewrites its offset file with exactly the partitions a commit names, so a safe reset commits the group's full set of offsets, which only the offset file on the volume holds", err)
		}
		return volume.Layout{}, nil, err
	}
	// Every write names the generation it assumes and the dir it uses.
	if dir, derr := l.LiveOffsetsDir(); derr == nil {
		g.Notef("offset files in %s; %s", dir, g.GenerationNote(l))
	} else {
		g.Notef("%s", g.GenerationNote(l))
	}
	cl, err := ConnectForWrite(ctx, g, offline, force)
	if err != nil {
		return volume.Layout{}, nil, err
	}
	return l, cl, nil
}

// WriteGroups are the groups a write names: given, each once in the
// order given, or with all every group (AllGroups).
func WriteGroups(ctx context.Context, l volume.Layout, cl *wire.Client, notes render.Notes, given []string, all bool) ([]string, error) {
	if all {
		return AllGroups(ctx, l, cl, notes)
	}
	return inspect.SelectGroups(nil, given, false, nil), nil
}
