package wire

// KeyCommandConfig names the Kafka client properties file flag
// (--command-config); it is read as a file, not resolved as a setting.
const KeyCommandConfig = "command-config"

// FlagKind is how a connection flag takes its value.
type FlagKind uint8

const (
	// FlagText takes one value.
	FlagText FlagKind = iota
	// FlagSwitch takes none (true when given).
	FlagSwitch
	// FlagList takes a comma list, or is repeated.
	FlagList
)

// The headings the connection flags are listed under.
const (
	CategoryConnection = "Connection"
	CategoryTLS        = "TLS"
	CategorySASL       = "SASL"
	CategoryProfile    = "Profile"
)

// Flag is a connection setting as the command line gives it: its key is
// the flag's name, Aliases its other names, Usage its help (its
// environment variable appended, when it has one).
type Flag struct {
	Key      string
	Aliases  []string
	Usage    string
	Category string
	Kind     FlagKind
}

// Flags are the connection flags, in the order help lists them: each
// setting of ConnectionKeys, with --command-config, --profile and
// --config. Flags beat the environment (KAASCTL_*), which beats the
// profile.
func Flags() []Flag {
	env := func(k string) string { return " (" + EnvName(k) + ")" }
	const conn, tls, sasl, prof = CategoryConnection, CategoryTLS, CategorySASL, CategoryProfile
	return []Flag{
		{KeyBrokers, []string{"b", "bootstrap-server"}, "kaas brokers host:port, comma separated or repeated (--bootstrap-server as in Kafka's tools)" + env(KeyBrokers), conn, FlagList},
		{KeyCommandConfig, nil, "Kafka client properties `FILE`, as kafka-consumer-groups.sh takes it: security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN, SCRAM), ssl.truststore.*/ssl.keystore.* (PEM only; JKS/PKCS12 are refused); flags win over it", conn, FlagText},
		{KeyProfile, nil, "profile in the config file" + env(KeyProfile), prof, FlagText},
		{KeyConfig, nil, "config file (default $XDG_CONFIG_HOME/kaasctl/config.yaml or ~/.config/kaasctl/config.yaml)" + env(KeyConfig), prof, FlagText},
		{KeyTLS, nil, "connect with TLS (implied by the other --tls-* flags)" + env(KeyTLS), tls, FlagSwitch},
		{KeyTLSCA, nil, "PEM file of the CA that signed the brokers' certificates" + env(KeyTLSCA), tls, FlagText},
		{KeyTLSCert, nil, "PEM client certificate for mutual TLS" + env(KeyTLSCert), tls, FlagText},
		{KeyTLSKey, nil, "PEM client key for mutual TLS" + env(KeyTLSKey), tls, FlagText},
		{KeyTLSInsecure, nil, "do not verify the brokers' certificates (testing only)" + env(KeyTLSInsecure), tls, FlagSwitch},
		{KeyTLSServerName, nil, "name to verify the brokers' certificates against" + env(KeyTLSServerName), tls, FlagText},
		{KeySASLMechanism, nil, "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512" + env(KeySASLMechanism), sasl, FlagText},
		{KeySASLUser, nil, "SASL user" + env(KeySASLUser), sasl, FlagText},
		{KeySASLPasswordEnv, nil, "NAME of the environment variable holding the SASL password (default " + DefaultPasswordEnv + ")" + env(KeySASLPasswordEnv), sasl, FlagText},
		{KeySASLPasswordFil, nil, "file holding the SASL password" + env(KeySASLPasswordFil), sasl, FlagText},
		{KeyTimeout, nil, "timeout of each broker call: 10s, 500ms, or a bare number of milliseconds as in Kafka's tools (default 10s)" + env(KeyTimeout), conn, FlagText},
		{KeyMaxVersions, nil, "cap on request versions: " + MaxVersionsHelp + env(KeyMaxVersions), conn, FlagText},
	}
}

// IsCategory reports whether a flag heading is one of the connection
// flags'.
func IsCategory(cat string) bool {
	return cat == CategoryConnection || cat == CategoryTLS || cat == CategorySASL || cat == CategoryProfile
}
