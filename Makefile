# kaasctl — make targets. `make test` is what CI runs (.ci/run).
GO       ?= go
BIN      := bin/kaasctl
PKGS     := ./...
FUZZTIME ?= 20s

.PHONY: build test test-scale test-real vet fmt-check monitoring-check bench fuzz demo clean

build:
	$(GO) build -o $(BIN) ./cmd/kaasctl

vet:
	@echo "go vet $(PKGS)"; $(GO) vet $(PKGS) && echo "go vet: ok"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi; \
	echo "gofmt: ok"

# Alert rules, their unit tests and the example scrape config (promtool from
# Debian's prometheus package; .ci/run installs it). Without promtool this
# fails in CI and is skipped with a note elsewhere.
monitoring-check:
	@if command -v promtool >/dev/null 2>&1; then \
	  promtool check rules monitoring/alerts.yml && \
	  promtool test rules monitoring/alerts_test.yml && \
	  promtool check config monitoring/scrape.yml; \
	elif [ -n "$$CI" ]; then echo "promtool not found (CI is set): install Debian's prometheus package"; exit 1; \
	else echo "promtool not found: skipping the monitoring/ checks (apt-get install prometheus)"; fi

# Packages whose own code is concurrent run under -race, the others without
# it, both at once (scripts/test.sh; 'go run ./scripts/racepkgs' shows why).
test: fmt-check vet monitoring-check
	@GO=$(GO) sh scripts/test.sh

# The exporter at scale (issue 37): three shards and one unsharded exporter,
# kaasctl processes over the sandbox with 100,000 file-only groups, scraped
# by Debian's prometheus while a broker is stopped and started; every scrape
# of every target is checked (commands.TestExporterShardsAtScale: 3½ to 8
# minutes on two shared cores, too heavy for 'make test'; .ci/run runs it
# after it). KAASCTL_SCALE_GROUPS and KAASCTL_SCALE_INTERVAL change the
# number of groups and the refresh and scrape interval (default 30s).
test-scale: build
	KAASCTL_SCALE=1 KAASCTL_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 30m -run '^TestExporterShardsAtScale$$' -v ./commands/

# The real-kaas tier: kaas's Go broker from ../shared/kaas-go/src and its Rust
# 0.2.18 broker from ../shared/kaas-rust/src (each built once, cached under
# $$KAASCTL_REALKAAS_CACHE or ~/.cache/kaasctl-realkaas, keyed by a hash of its
# source and toolchain; the Rust one needs cargo >= 1.85 and protoc, its crates
# are fetched from Debian's packages the first time), 3-broker clusters on
# loopback, kaasctl driven as a user would. Every scenario runs on both
# generations (subtests go and rust-0.2.18; REALKAAS_RUN='/rust' runs one);
# the Rust-only ones are TestRust*. A broker that cannot be built or started
# fails the run; it never skips. The first builds compile the brokers'
# dependencies (minutes); the timeout leaves room for that.
REALKAAS_RUN ?= .
# Scenarios mostly wait on kaas (session timeouts, the controller's grace,
# a drain at a set rate): four clusters at once keep two cores busy without
# starving one (go test's default, GOMAXPROCS, runs two).
REALKAAS_PARALLEL ?= 4
test-real:
	$(GO) test -tags realkaas -count=1 -timeout 30m -parallel $(REALKAAS_PARALLEL) -run '$(REALKAAS_RUN)' -v ./internal/realkaas/

# Benchmarks with synthetic data generated at run time; each prints its
# figure beside the SPEC target.
# 'make bench KAASCTL_SOAK=1h' also runs the exporter's memory soak test for
# an hour (1,000 groups; 'make test' runs it for a few hundred refreshes).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
	@if [ -n "$(KAASCTL_SOAK)" ]; then \
	  KAASCTL_SOAK=$(KAASCTL_SOAK) $(GO) test -run '^TestExporterMemorySoak$$' -count=1 -v -timeout 3h ./exporter; \
	fi
	@sh scripts/bench.sh

# Run every fuzz target for FUZZTIME each (seeds are checked in under testdata/fuzz).
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

demo: build
	@sh scripts/demo.sh

clean:
	rm -rf bin
