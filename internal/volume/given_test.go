package volume

import "testing"

func TestFirstRanksFlagEnvProfile(t *testing.T) {
	t.Parallel()
	in := ResolveInput{EnvDataDir: "/env", ProfileDataDir: "/prof", ProfileClusterDir: "/pc", KaasVersionFlag: "  ", EnvKaasVersion: "0.2.18"}
	if g := First(in.DataDirs()); g.Value != "/env" || g.Origin != OriginEnv || g.From != "KAAS_DATA_DIR" {
		t.Fatalf("data dir %+v", g)
	}
	if g := First(in.ClusterDirs()); g.Value != "/pc" || g.Origin != OriginProfile || g.From != "profile clusterDir" {
		t.Fatalf("cluster dir %+v", g)
	}
	// A blank flag gives nothing: the variable wins, as ResolveGeneration pins.
	if g := First(in.KaasVersions()); g.Value != "0.2.18" || g.Origin != OriginEnv {
		t.Fatalf("kaas version %+v", g)
	}
	if g := First(ResolveInput{}.DataDirs()); g != (Given{}) {
		t.Fatalf("nothing given: %+v", g)
	}
}
