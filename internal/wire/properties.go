package wire

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// MaxPropertiesBytes bounds a --command-config file.
const MaxPropertiesBytes = 1 << 20

// ParseProperties reads a Java properties file as Kafka's tools do: lines
// "key=value", "key: value" or "key value"; '#' and '!' start comments;
// a line ending in an odd number of backslashes continues on the next
// (whose leading blanks are dropped); \t \n \r \f \uXXXX and \<any> escapes
// in keys and values. A later key wins, as in java.util.Properties.
func ParseProperties(data []byte) (map[string]string, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("not UTF-8 text")
	}
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Logical line: join continuations.
		for continues(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continues(line) {
			line = line[:len(line)-1]
		}
		key, rest := splitKey(line)
		k, err := unescapeProp(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		v, err := unescapeProp(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		out[k] = v
	}
	return out, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKey splits a logical line at the first unescaped '=', ':' or blank;
// blanks around the separator belong to neither side.
func splitKey(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key = line[:end]
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescapeProp(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("malformed \\uXXXX escape")
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf("malformed \\uXXXX escape %q", s[i-1:i+5])
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// CommandConfig is a Kafka client properties file (--command-config, as
// kafka-consumer-groups.sh takes it) translated to kaasctl's settings.
type CommandConfig struct {
	Path string
	// Settings holds connection settings by key (KeyTLS, KeyTLSCA, ...).
	Settings map[string]string
	// password is sasl.jaas.config's password; never printed.
	password string
	// Ignored lists keys kaasctl does not use, each with the reason.
	Ignored []string
	// Insecure says why others could change the file (see
	// Config.Insecure), "" when they cannot.
	Insecure string
}

// ReadCommandConfig reads and translates a --command-config file.
func ReadCommandConfig(path string) (*CommandConfig, error) {
	b, err := readUserFile("--command-config", path, MaxPropertiesBytes)
	if err != nil {
		return nil, err
	}
	props, err := ParseProperties(b)
	if err != nil {
		return nil, fmt.Errorf("--command-config %s: %v", path, err)
	}
	cc, err := TranslateProperties(props)
	if err != nil {
		return nil, fmt.Errorf("--command-config %s: %v", path, err)
	}
	cc.Path = path
	cc.Insecure = safefs.OthersCanChange(path)
	return cc, nil
}

// Unsupported Kafka client settings, and what to do instead.
var unsupportedProps = map[string]string{
	"ssl.truststore.certificates":         "inline PEM is not supported: put the CA certificates in a file and set ssl.truststore.location (type PEM)",
	"ssl.keystore.certificate.chain":      "inline PEM is not supported: put the certificate chain and key in one PEM file and set ssl.keystore.location (type PEM)",
	"ssl.keystore.key":                    "inline PEM is not supported: put the certificate chain and key in one PEM file and set ssl.keystore.location (type PEM)",
	"ssl.key.password":                    "encrypted private keys are not supported: decrypt it (openssl pkey -in key.pem -out plain.pem) and keep the file private",
	"sasl.login.callback.handler.class":   "login callback handlers are Java classes; kaasctl takes the user and password from sasl.jaas.config",
	"sasl.client.callback.handler.class":  "callback handlers are Java classes; kaasctl takes the user and password from sasl.jaas.config",
	"ssl.engine.factory.class":            "SSL engine factories are Java classes; use PEM files",
	"security.providers":                  "security providers are Java classes",
	"sasl.kerberos.service.name":          "Kerberos (GSSAPI) is not supported by kaas or kaasctl",
	"sasl.oauthbearer.token.endpoint.url": "OAUTHBEARER is not supported by kaas or kaasctl",
}

// Settings kaasctl accepts but does not need (no warning beyond a note).
var harmlessProps = map[string]string{
	"client.id":                             "kaasctl identifies itself as kaasctl",
	"ssl.truststore.password":               "PEM files have no store password",
	"ssl.keystore.password":                 "PEM files have no store password",
	"ssl.protocol":                          "kaasctl negotiates TLS 1.2 or later",
	"ssl.enabled.protocols":                 "kaasctl negotiates TLS 1.2 or later",
	"retries":                               "kaasctl retries each call twice within --timeout",
	"retry.backoff.ms":                      "kaasctl retries each call twice within --timeout",
	"default.api.timeout.ms":                "use --timeout",
	"connections.max.idle.ms":               "not needed for one command",
	"metadata.max.age.ms":                   "not needed for one command",
	"ssl.endpoint.identification.algorithm": "",
}

// TranslateProperties maps Kafka client properties to kaasctl settings.
// It refuses what would change the security of the connection if ignored
// (an unknown protocol or mechanism, JKS/PKCS12 stores, encrypted keys,
// disabled host name checks) and lists the rest it does not use.
func TranslateProperties(props map[string]string) (*CommandConfig, error) {
	pt := &propTranslation{props: props, cc: &CommandConfig{Settings: map[string]string{}}, used: map[string]bool{"security.protocol": true}}
	proto, sasl, tls, err := pt.protocol()
	if err != nil {
		return nil, err
	}
	if tls {
		pt.cc.Settings[KeyTLS] = "true"
	}
	if sasl {
		if err := pt.sasl(proto); err != nil {
			return nil, err
		}
	} else {
		for _, k := range []string{"sasl.mechanism", "sasl.jaas.config"} {
			if _, ok := props[k]; ok {
				pt.cc.Ignored = append(pt.cc.Ignored, k+": security.protocol is "+orDefault(proto, "PLAINTEXT")+", so Kafka does not use SASL either")
				pt.used[k] = true
			}
		}
	}
	if err := pt.stores(); err != nil {
		return nil, err
	}
	if err := pt.connection(); err != nil {
		return nil, err
	}
	if err := pt.unused(); err != nil {
		return nil, err
	}
	if tls && pt.cc.Settings[KeyTLSCA] == "" {
		pt.cc.Ignored = append(pt.cc.Ignored, "ssl.truststore.location not set: the brokers' certificates are checked against the system's CAs")
	}
	return pt.cc, nil
}

// propTranslation is TranslateProperties' work: the properties read, the
// settings made of them, and which properties were used.
type propTranslation struct {
	props map[string]string
	cc    *CommandConfig
	used  map[string]bool
}

// get is property k without surrounding space ("" when unset).
func (pt *propTranslation) get(k string) string { return strings.TrimSpace(pt.props[k]) }

// protocol reads security.protocol: whether the connection uses SASL and
// TLS (neither by default, as in Kafka).
func (pt *propTranslation) protocol() (proto string, sasl, tls bool, err error) {
	proto = strings.ToUpper(pt.get("security.protocol"))
	switch proto {
	case "", "PLAINTEXT":
	case "SSL":
		tls = true
	case "SASL_PLAINTEXT":
		sasl = true
	case "SASL_SSL":
		sasl, tls = true, true
	default:
		return "", false, false, fmt.Errorf("security.protocol %q: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", pt.props["security.protocol"])
	}
	return proto, sasl, tls, nil
}

// sasl reads the mechanism and the user and password of sasl.jaas.config,
// whose login module must be the mechanism's.
func (pt *propTranslation) sasl(proto string) error {
	mech := pt.get("sasl.mechanism")
	if mech == "" {
		return fmt.Errorf("security.protocol %s without sasl.mechanism means GSSAPI (Kerberos) in Kafka, which kaas and kaasctl do not support: set sasl.mechanism to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", proto)
	}
	m, err := NormalizeMechanism(mech)
	if err != nil {
		return fmt.Errorf("sasl.mechanism %q is not supported: kaasctl speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (not GSSAPI or OAUTHBEARER)", mech)
	}
	jaas := pt.get("sasl.jaas.config")
	if jaas == "" {
		return fmt.Errorf("sasl.mechanism %s needs sasl.jaas.config with username and password", m)
	}
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return fmt.Errorf("sasl.jaas.config: %v", err)
	}
	wantModule := "ScramLoginModule"
	if m == "PLAIN" {
		wantModule = "PlainLoginModule"
	}
	if module[strings.LastIndexByte(module, '.')+1:] != wantModule {
		return fmt.Errorf("sasl.jaas.config uses %s, but sasl.mechanism %s needs org.apache.kafka.common.security.%s.%s", module, m, map[bool]string{true: "plain", false: "scram"}[m == "PLAIN"], wantModule)
	}
	if opts["username"] == "" || opts["password"] == "" {
		return fmt.Errorf("sasl.jaas.config needs username=\"...\" and password=\"...\"")
	}
	pt.cc.Settings[KeySASLMechanism], pt.cc.Settings[KeySASLUser], pt.cc.password = m, opts["username"], opts["password"]
	pt.used["sasl.mechanism"], pt.used["sasl.jaas.config"] = true, true
	return nil
}

// stores reads the trust and key stores, which must be PEM files: the
// truststore is the CA file, a keystore holds the key and the certificate
// chain.
func (pt *propTranslation) stores() error {
	storeType := func(k string) error {
		t := strings.ToUpper(pt.get(k))
		if t == "" {
			t = "JKS" // Kafka's default
		}
		if t != "PEM" {
			return fmt.Errorf("%s is %s: kaasctl reads PEM files only (JKS and PKCS12 stores are not supported); convert it, e.g. keytool -exportcert -rfc / openssl pkcs12 -nodes, and set %s=PEM", strings.TrimSuffix(k, ".type"), t, k)
		}
		return nil
	}
	if loc := pt.get("ssl.truststore.location"); loc != "" {
		if err := storeType("ssl.truststore.type"); err != nil {
			return err
		}
		pt.cc.Settings[KeyTLSCA] = loc
	}
	if loc := pt.get("ssl.keystore.location"); loc != "" {
		if err := storeType("ssl.keystore.type"); err != nil {
			return err
		}
		// A PEM keystore holds the key and the certificate chain.
		pt.cc.Settings[KeyTLSCert], pt.cc.Settings[KeyTLSKey] = loc, loc
	}
	pt.used["ssl.truststore.location"], pt.used["ssl.truststore.type"], pt.used["ssl.keystore.location"], pt.used["ssl.keystore.type"] = true, true, true, true
	return nil
}

// connection reads the host name check (never off), the request timeout
// and the bootstrap servers.
func (pt *propTranslation) connection() error {
	if v, ok := pt.props["ssl.endpoint.identification.algorithm"]; ok && strings.TrimSpace(v) == "" {
		return fmt.Errorf("ssl.endpoint.identification.algorithm is empty (no host name check): kaasctl always checks the name; use --tls-server-name NAME for another name, or --tls-insecure-skip-verify for tests")
	}
	if v := pt.get("request.timeout.ms"); v != "" {
		if _, err := ParseTimeout(v); err != nil {
			return fmt.Errorf("request.timeout.ms: %v", err)
		}
		pt.cc.Settings[KeyTimeout] = v
		pt.used["request.timeout.ms"] = true
	}
	if v := pt.get("bootstrap.servers"); v != "" {
		pt.cc.Settings[KeyBrokers] = v
		pt.used["bootstrap.servers"] = true
	}
	return nil
}

// unused goes through the properties not used, in name order: one that
// would weaken the connection if ignored is an error, the others are
// listed as ignored (with why, for those kaasctl knows it does not need).
func (pt *propTranslation) unused() error {
	for _, k := range slices.Sorted(maps.Keys(pt.props)) {
		if pt.used[k] {
			continue
		}
		if why, ok := unsupportedProps[k]; ok {
			return fmt.Errorf("%s: %s", k, why)
		}
		if why, ok := harmlessProps[k]; ok {
			if why != "" {
				pt.cc.Ignored = append(pt.cc.Ignored, k+": "+why)
			}
			continue
		}
		pt.cc.Ignored = append(pt.cc.Ignored, k+": not a setting kaasctl uses")
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// parseJAAS reads "<module> <flag> key=value ... ;" (values quoted or not).
func parseJAAS(s string) (string, map[string]string, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	f := strings.Fields(s)
	if len(f) < 2 {
		return "", nil, fmt.Errorf("want '<LoginModule> required username=\"...\" password=\"...\";'")
	}
	module, flag := f[0], strings.ToLower(f[1])
	switch flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("%q after the login module: want required", f[1])
	}
	rest := strings.TrimSpace(s[strings.Index(s, f[1])+len(f[1]):])
	opts := map[string]string{}
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return "", nil, fmt.Errorf("option %q is not key=value", firstField(rest))
		}
		key := strings.TrimSpace(rest[:eq])
		rest = strings.TrimLeft(rest[eq+1:], " \t\n")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			closed := false
			for ; i < len(rest); i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					b.WriteByte(rest[i])
					continue
				}
				if rest[i] == '"' {
					closed = true
					break
				}
				b.WriteByte(rest[i])
			}
			if !closed {
				return "", nil, fmt.Errorf("option %s: unterminated quote", key)
			}
			val, rest = b.String(), rest[i+1:]
		} else {
			end := strings.IndexAny(rest, " \t\n")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		if strings.ContainsAny(key, " \t\"") || key == "" {
			return "", nil, fmt.Errorf("option name %q is not valid", key)
		}
		opts[key] = val
		rest = strings.TrimSpace(rest)
	}
	return module, opts, nil
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}
