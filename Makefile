# Set-up and everyday commands. `make test` and `make bench` work on a fresh Debian machine with Swift 6.3:
# they install what is missing first.

SWIFT ?= swift
# Extra flags for every build, e.g. SWIFTFLAGS="-Xswiftc -warnings-as-errors" as CI uses.
SWIFTFLAGS ?=
# apt-get needs root; use sudo when not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-tsan bench crashtest lint format clean

all: build

## deps: install liblmdb-dev (and pkg-config) with apt-get when pkg-config cannot find lmdb
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists lmdb; then \
		echo "Installing liblmdb-dev and pkg-config with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev pkg-config >/dev/null; \
	fi

## build: debug build of every target
build: deps
	$(SWIFT) build $(SWIFTFLAGS)

## test: the whole test suite
test: deps
	$(SWIFT) test $(SWIFTFLAGS)

## test-tsan: the concurrency, environment and observation tests under the thread sanitizer (separate build directory)
test-tsan: deps
	$(SWIFT) test $(SWIFTFLAGS) --sanitize=thread --scratch-path .build/tsan --filter 'ConcurrencyTests|EnvironmentTests|ObservationTests'

## bench: build kvbench in release mode and run the default suite: the table on stdout, JSON and SVG in bench-results/
## (BENCHFLAGS="--size large" adds the 1M-record scale points; kvbench --help lists the options)
BENCHFLAGS ?=
bench: deps
	$(SWIFT) build -c release --product kvbench $(SWIFTFLAGS)
	mkdir -p bench-results
	.build/release/kvbench --json bench-results/kvbench.json --svg bench-results/kvbench.svg $(BENCHFLAGS)

## crashtest: start writer processes, kill each at a random moment and check the store after each kill (debug build;
## CRASHTEST_ITERATIONS kills, CRASHTESTFLAGS="--seed 42 --verbose" for more; crashtest --help lists the options)
CRASHTEST_ITERATIONS ?= 1000
CRASHTESTFLAGS ?=
crashtest: deps
	$(SWIFT) build --product crashtest $(SWIFTFLAGS)
	.build/debug/crashtest run --iterations $(CRASHTEST_ITERATIONS) $(CRASHTESTFLAGS)

## lint: swift format in strict mode
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks Tools

## format: rewrite sources in the house format
format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Benchmarks Tools

clean:
	rm -rf .build
