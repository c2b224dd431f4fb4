package wire

import "testing"

// Every profile setting has the config.yaml path its field lives at, read
// off the key→field table; the "sasl" key (remove the block) has none.
func TestProfileKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		KeyBrokers: "brokers", KeyDataDir: "dataDir", KeyTLS: "tls.enabled", KeyTLSCA: "tls.caFile",
		KeyTLSInsecure: "tls.insecureSkipVerify", KeySASLPasswordFil: "sasl.passwordFile", KeyTimeout: "timeout",
		KeyMaxVersions: "maxVersions", KeyKaasVersion: "kaasVersion", KeySASL: "", "no-such-key": "",
	} {
		if got := ProfileKey(key); got != want {
			t.Errorf("ProfileKey(%q) = %q, want %q", key, got, want)
		}
	}
	for _, k := range ProfileKeys {
		if k != KeySASL && ProfileKey(k) == "" {
			t.Errorf("profile key %q has no path", k)
		}
	}
}
