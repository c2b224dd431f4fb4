# kaasctl — make targets. `make test` is what CI runs (.ci/run).
GO       ?= go
BIN      := bin/kaasctl
PKGS     := ./...
FUZZTIME ?= 20s

.PHONY: build test vet fmt-check bench fuzz demo clean

build:
	$(GO) build -o $(BIN) ./cmd/kaasctl

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: fmt-check vet
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# Benchmarks with synthetic data generated at run time; each prints its
# figure beside the SPEC target.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
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
