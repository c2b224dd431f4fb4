package exporter

import (
	"strconv"

	"github.com/kaasctl/kaasctl/inspect"
)

// Sharded exporters (--shard K/N) split the groups by kaas's own routing
// (inspect.ShardRule, observe.Source.Shard): each exports the series of
// the groups it owns, and the series of the whole cluster (below) come
// from shard 0 alone, so sums across the shards are one exporter's. The
// exporter's own series (refreshes, groups observed, build info) come
// from every shard.

var (
	dShardInfo    = fam(gaugeType, "kaas_exporter_shard_info", "The exporter's --shard: shard (from 0) of shards, and whether it exports the cluster's series (cluster_wide, shard 0). Always 1; absent when the exporter is not sharded.", "shard", "shards", "cluster_wide")
	dShardVersion = fam(gaugeType, "kaas_exporter_shard_assignment_version", "The assignmentVersion of CD/assignment.json this shard's last refresh split the groups by (absent when the exporter is not sharded or read none): shards at different versions may both export, or both leave out, a group that version moved, until each refreshes.")
	dShardOthers  = fam(gaugeType, "kaas_exporter_shard_other_groups", "Groups matching --group-regex that another shard owns under the assignment version the last refresh read (absent when the exporter is not sharded).")
)

// clusterWide are the families of the whole cluster: assignment.json, the
// brokers, the volume's findings and partitions. A shard other than 0
// leaves them out.
var clusterWide = map[*family]bool{
	dAssignmentReadable: true, dAssignmentVersions: true, dVersionsMissed: true, dVersionsBackwards: true,
	dAssignmentVersion: true, dControllerEpoch: true, dAssignmentGenerated: true, dBrokersListed: true,
	dBrokersAlive: true, dExplicitEntries: true, dMoves: true, dFindings: true, dGeneration: true,
	dBrokerReachable: true, dBrokerGroups: true, dBrokerUp: true, dBrokerListedAlive: true,
	dServedBehind: true, dPartitionIncidents: true,
}

func init() {
	refreshMetrics = append(refreshMetrics,
		metric[*refreshCtx]{dShardInfo, func(tw *textWriter, f *family, x *refreshCtx) {
			if sh := x.c.shard; sh != nil {
				tw.sample(f, 1, strconv.Itoa(sh.K), strconv.Itoa(sh.N), strconv.FormatBool(sh.ClusterWide()))
			}
		}},
		metric[*refreshCtx]{dShardVersion, func(tw *textWriter, f *family, x *refreshCtx) {
			if a := x.o.Assignment; x.c.shard != nil && a != nil {
				tw.sample(f, float64(a.AssignmentVersion))
			}
		}},
		metric[*refreshCtx]{dShardOthers, func(tw *textWriter, f *family, x *refreshCtx) {
			if x.c.shard != nil {
				tw.sample(f, float64(x.o.OtherShards))
			}
		}})
}

// leavesOut reports whether the refresh's page leaves f out: a cluster
// family on a shard other than 0.
func (c *counters) leavesOut(f *family) bool {
	return c.shard != nil && !c.shard.ClusterWide() && clusterWide[f]
}

// shardOf is the source's shard (nil: not sharded, or one shard).
func shardOf(sh *inspect.Shard) *inspect.Shard {
	if sh == nil || sh.N <= 1 {
		return nil
	}
	return sh
}
