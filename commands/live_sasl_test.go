package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The live commands through SASL (SCRAM-SHA-256) on kfake: groups list,
// groups describe, doctor (brokers only); a wrong password fails in one
// line naming SASL.
func TestLiveCommandsSASL(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(2, "orders"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.SASL(scram.Auth{User: "ops", Pass: "s3cret-pw"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	os.AddOffset("orders", 0, 0, -1)
	os.AddOffset("orders", 1, 0, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "sasl-app", os); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(kf.ListenAddrs(), ","), "KAASCTL_SASL_MECHANISM": "scram-sha-256",
		"KAASCTL_SASL_USER": "ops", "KAASCTL_SASL_PASSWORD": "s3cret-pw", "KAASCTL_TIMEOUT": "3s"}
	r := runCLI(t, "", env, "groups", "list", "-o", "json")
	v := decodeJSON[GroupsListView](t, r)
	if r.Code != 0 || v.Sources.Mode != "live" || len(v.Sources.Brokers) != 3 {
		t.Fatalf("groups list: exit %d sources %+v\n%s", r.Code, v.Sources, r.Err)
	}
	row := rowOf(t, v, "sasl-app")
	if len(row.Live.ListedBy) != 1 || row.Live.State != "Empty" {
		t.Errorf("row %+v live %+v", row, row.Live)
	}
	r = runCLI(t, "", env, "groups", "describe", "sasl-app", "-o", "json")
	dv := decodeJSON[GroupsDescribeLiveView](t, r)
	d := describeOf(t, dv, "sasl-app")
	if r.Code != 0 || len(d.Partitions) != 2 || d.Partitions[0].Committed != 0 || !d.LagKnown {
		t.Errorf("describe: exit %d %+v\n%s", r.Code, d.Partitions, r.Err)
	}
	r = runCLI(t, "", env, "doctor", "-o", "json")
	dj := decodeJSON[doctorJSON](t, r)
	if r.Code != 0 || dj.Mode != "live" {
		t.Errorf("doctor: exit %d mode %s findings %+v\n%s", r.Code, dj.Mode, dj.Findings, r.Err)
	}
	env["KAASCTL_SASL_PASSWORD"] = "wrong"
	r = runCLI(t, "", env, "groups", "list")
	if r.Code == 0 || !strings.Contains(r.Err, "SASL authentication failed") || strings.Count(strings.TrimSpace(r.Err), "\n") > 3 {
		t.Errorf("wrong password: exit %d\n%s", r.Code, r.Err)
	}
	if strings.Contains(r.Err+r.Out, "wrong") && strings.Contains(r.Err, "=wrong") {
		t.Errorf("password echoed:\n%s", r.Err)
	}
}

// Kafka's spelling of the connection: --bootstrap-server, a client
// properties file (--command-config) with SCRAM in sasl.jaas.config, and
// --timeout in milliseconds. A JKS truststore is refused by name.
func TestLiveCommandConfigSASL(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	dir := t.TempDir()
	props := writeFile(t, dir, "client.properties", "# as for kafka-consumer-groups.sh\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"ops\" password=\"s3cret-pw\";\nclient.id=ops\n")
	boot := kf.ListenAddrs()[0]
	r := runCLI(t, "", nil, "groups", "list", "--bootstrap-server", boot, "--command-config", props, "--timeout", "3000", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Err, "client.id") {
		t.Fatalf("groups list with --command-config: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if strings.Contains(r.Out+r.Err, "s3cret-pw") {
		t.Error("password printed")
	}
	bad := writeFile(t, dir, "bad.properties", "security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\nssl.truststore.password=changeit\n")
	r = runCLI(t, "", nil, "groups", "list", "--bootstrap-server", boot, "--command-config", bad)
	if r.Code != 2 || !strings.Contains(r.Err, "JKS and PKCS12 stores are not supported") || strings.Contains(r.Err, "changeit") {
		t.Errorf("JKS: exit %d\n%s", r.Code, r.Err)
	}
}
