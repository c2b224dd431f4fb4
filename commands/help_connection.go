package commands

func init() {
	addHelpTopic("connection", "how kaasctl reaches the brokers: flags, KAASCTL_* variables, profiles, TLS, SASL, version cap", `
Connecting to kaas brokers

Every command accepts the connection flags; a value is taken from the first of
  1. the flag                     --brokers kaas-0.kaas:9092,kaas-1.kaas:9092
  2. the environment              KAASCTL_BROKERS=kaas-0.kaas:9092,...
  3. the profile in use           brokers: [kaas-0.kaas:9092, ...]
  4. the default
'kaasctl config show' prints every resolved value with where it came from.

  flag                        variable                            profile field
  --brokers, -b               KAASCTL_BROKERS                     brokers
    (also --bootstrap-server, as in Kafka's tools)
  --tls                       KAASCTL_TLS                         tls.enabled
  --tls-ca FILE               KAASCTL_TLS_CA                      tls.caFile
  --tls-cert FILE             KAASCTL_TLS_CERT                    tls.certFile
  --tls-key FILE              KAASCTL_TLS_KEY                     tls.keyFile
  --tls-insecure-skip-verify  KAASCTL_TLS_INSECURE_SKIP_VERIFY    tls.insecureSkipVerify
  --tls-server-name NAME      KAASCTL_TLS_SERVER_NAME             tls.serverName
  --sasl-mechanism M          KAASCTL_SASL_MECHANISM              sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
  --sasl-user U               KAASCTL_SASL_USER                   sasl.user
  --sasl-password-env VAR     KAASCTL_SASL_PASSWORD_ENV           sasl.passwordEnv (default KAASCTL_SASL_PASSWORD)
  --sasl-password-file FILE   KAASCTL_SASL_PASSWORD_FILE          sasl.passwordFile
  --timeout 10s               KAASCTL_TIMEOUT                     timeout (each broker call; a bare
                                                                  number is milliseconds, as in Kafka)
  --max-versions kaas         KAASCTL_MAX_VERSIONS                maxVersions
  --profile NAME              KAASCTL_PROFILE                     (current: in the file)
  --config FILE               KAASCTL_CONFIG
  --data-dir, --cluster-dir   KAAS_DATA_DIR, KAAS_CLUSTER_DIR     dataDir, clusterDir

Kafka client properties: --command-config FILE reads the file kafka-consumer-groups.sh takes
(security.protocol, sasl.mechanism, sasl.jaas.config for PLAIN and SCRAM, ssl.truststore.* and
ssl.keystore.* of type PEM, request.timeout.ms); its values rank just below the flags. JKS and
PKCS12 stores, GSSAPI, OAUTHBEARER, inline PEM and encrypted keys are refused by name, and
keys kaasctl does not use are listed in one warning. The password in sasl.jaas.config is used
for that run only and never printed.

Passwords are never stored in the config and never printed: the profile names an environment
variable (passwordEnv) or a file (passwordFile, keep it mode 600). A config holding a
password is refused.

The config file is $XDG_CONFIG_HOME/kaasctl/config.yaml, else ~/.config/kaasctl/config.yaml
('kaasctl config path'). 'kaasctl config set-profile' writes it atomically (directory 0700,
file 0600); comments in a hand-edited file are not kept. Example:

  current: prod
  profiles:
    prod:
      brokers: [kaas-0.kaas:9092, kaas-1.kaas:9092, kaas-2.kaas:9092]
      dataDir: /data
      tls: {caFile: /etc/kaas/ca.pem}
      sasl: {mechanism: SCRAM-SHA-512, user: ops, passwordEnv: KAAS_OPS_PASSWORD}
      timeout: 15s

  kaasctl config set-profile prod -b kaas-0.kaas:9092 --data-dir /data --sasl-mechanism SCRAM-SHA-512 \
      --sasl-user ops --sasl-password-env KAAS_OPS_PASSWORD --tls-ca /etc/kaas/ca.pem --use
  kaasctl config check            reach every seed broker, list the cluster's brokers

Version cap: kaas serves ApiVersions v0-4, Metadata v1-10, FindCoordinator v0-4, ListGroups
v0-4, DescribeGroups v0-5, OffsetFetch v1-8, OffsetCommit v2-8, ListOffsets v1-7,
DeleteGroups v0-2, OffsetDelete v0, and an older kaas fails to decode a newer ApiVersions
request. kaasctl never sends above these (--max-versions kaas, the default). Use
--max-versions latest for other Kafka-compatible brokers, or a Kafka release (3.6, 2.8.1)
to match an older one.

When a broker cannot be reached the error names it and says why in one line: connection
refused, host not found, TLS handshake failed, SASL authentication failed, or no answer
within the timeout. Seeds that do not answer are warnings as long as one answers.
`)
}
