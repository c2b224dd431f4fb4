# Shared helpers for the kaasctl runbooks. Source it; it needs bash, coreutils,
# jq and kaasctl (KAASCTL overrides which binary).
KAASCTL=${KAASCTL:-kaasctl}

die() { printf 'runbook: %s\n' "$*" >&2; exit 1; }
say() { printf '%s\n' "$*" >&2; }

need() {
  command -v "$KAASCTL" >/dev/null 2>&1 || die "kaasctl not found (set KAASCTL=/path/to/kaasctl)"
  command -v jq >/dev/null 2>&1 || die "jq not found (apt-get install jq)"
}

# kctl runs kaasctl with the volume and broker flags the caller exported in
# KAASCTL_ARGS (e.g. KAASCTL_ARGS="--data-dir /data --brokers kaas-0:9092").
kctl() {
  # shellcheck disable=SC2086
  "$KAASCTL" "$@" ${KAASCTL_ARGS:-}
}
