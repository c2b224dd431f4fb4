package volume

import "strings"

// Origin is the kind of source a volume setting came from.
type Origin string

// The sources of a volume setting, highest rank first.
const (
	OriginFlag    Origin = "flag"
	OriginEnv     Origin = "env"
	OriginProfile Origin = "profile"
)

// Given is one source's value of a volume setting.
type Given struct {
	Value  string
	Origin Origin // "" when no source gives the setting (First)
	From   string // the flag, variable or profile key: "--data-dir", "KAAS_DATA_DIR", "profile dataDir"
}

// ClusterDirs is the cluster dir as each source gives it, in the order
// Resolve ranks them: the flag, the environment, the profile.
func (in ResolveInput) ClusterDirs() []Given {
	return []Given{
		{in.ClusterDirFlag, OriginFlag, "--cluster-dir"},
		{in.EnvClusterDir, OriginEnv, "KAAS_CLUSTER_DIR"},
		{in.ProfileClusterDir, OriginProfile, "profile clusterDir"},
	}
}

// DataDirs is the data dir as each source gives it, ranked as ClusterDirs.
func (in ResolveInput) DataDirs() []Given {
	return []Given{
		{in.DataDirFlag, OriginFlag, "--data-dir"},
		{in.EnvDataDir, OriginEnv, "KAAS_DATA_DIR"},
		{in.ProfileDataDir, OriginProfile, "profile dataDir"},
	}
}

// KaasVersions is the kaas version pin as each source gives it, ranked as
// ResolveGeneration applies them.
func (in ResolveInput) KaasVersions() []Given {
	return []Given{
		{in.KaasVersionFlag, OriginFlag, "--kaas-version"},
		{in.EnvKaasVersion, OriginEnv, "KAASCTL_KAAS_VERSION"},
		{in.ProfileKaasVersion, OriginProfile, "profile kaasVersion"},
	}
}

// First is the highest-ranked source that gives a value (blank values are
// not given), or a zero Given when none does.
func First(gs []Given) Given {
	for _, g := range gs {
		if strings.TrimSpace(g.Value) != "" {
			return g
		}
	}
	return Given{}
}
