# Set-up and everyday commands. `make test` and `make bench` work on a fresh Debian machine with Swift 6.3:
# they install what is missing first.

SWIFT ?= swift
# Extra flags for every build, e.g. SWIFTFLAGS="-Xswiftc -warnings-as-errors" as CI uses.
SWIFTFLAGS ?=
# apt-get needs root; use sudo when not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-large test-tsan test-asan fuzz bench bench-check bench-check-update crashtest lint format \
	docs clean

all: build

## deps: install liblmdb-dev (and pkg-config) with apt-get when pkg-config cannot find lmdb, libsqlite3-dev (kvbench's
## SQLite side) when pkg-config cannot find sqlite3, valgrind (bench-check)
## and nats-server (which the NATS module's tests start) when they are missing; Debian installs nats-server in
## /usr/sbin, outside some users' PATH
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists lmdb; then \
		echo "Installing liblmdb-dev and pkg-config with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev pkg-config >/dev/null; \
	fi
	@if ! pkg-config --exists sqlite3; then \
		echo "Installing libsqlite3-dev (kvbench's SQLite side) with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev >/dev/null; \
	fi
	@if ! command -v valgrind >/dev/null 2>&1; then \
		echo "Installing valgrind (bench-check counts instructions with callgrind) with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; \
	fi
	@if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then \
		echo "Installing nats-server with apt-get..."; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null; \
	fi

## build: debug build of every target
build: deps
	$(SWIFT) build $(SWIFTFLAGS)

## test: the whole test suite
test: deps
	$(SWIFT) test $(SWIFTFLAGS)

## test-large: the tests too long for every run, which `make test` skips (KVSTORE_LARGE_TESTS=1 enables them): the
## 1M-record migration and the 1 GiB external value, each with bounded memory
test-large: deps
	KVSTORE_LARGE_TESTS=1 $(SWIFT) test $(SWIFTFLAGS) --filter 'MigrationMemoryTests|ExternalLargeValueTests'

## test-tsan: the tests of concurrency, environments, observation, containers sharing one store, faults and replicas
## (publisher and replica threads) under the thread sanitizer (separate build directory)
TSAN_TESTS := ConcurrencyTests|EnvironmentTests|ObservationTests|SharedContainerTests|SharedStoreTests|ReplicaTests|FaultTests
test-tsan: deps
	$(SWIFT) test $(SWIFTFLAGS) --sanitize=thread --scratch-path .build/tsan --filter '$(TSAN_TESTS)'

## test-asan: the whole test suite under the address sanitizer (separate build directory), but for kvtool check's
## bounded-memory test, which measures the process's heap: ASan's quarantine of freed memory and its shadow memory
## inflate that by tens of megabytes, more or less depending on what other tests run meanwhile (make test runs it).
## LeakSanitizer is off: it reports lazily initialized globals and XCTest's runner, alive at exit.
test-asan: deps
	ASAN_OPTIONS=detect_leaks=0 \
		$(SWIFT) test $(SWIFTFLAGS) --sanitize=address --scratch-path .build/asan --skip CheckMemoryTests

## fuzz: build the libFuzzer targets of Tools/fuzz (with the address sanitizer), write each one's seeds with the real
## encoders, then fuzz each for FUZZ_SECONDS. New inputs collect in .build/fuzz/corpus/<target>, and a crashing input
## is saved in .build/fuzz/artifacts/<target>/ (reproduce: .build/fuzz/release/<target> <file>).
## `--sanitize fuzzer` makes SwiftPM let libFuzzer's main run; -sanitize=fuzzer,address in one flag instruments every
## module for coverage and the address sanitizer (as two flags, the driver keeps only the last).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := FuzzRecordDecoder FuzzIndexKey FuzzImportLine FuzzPageCheck FuzzStoreCheck
FUZZ_BUILD := $(CURDIR)/.build/fuzz
fuzz: deps
	$(SWIFT) build --package-path Tools/fuzz --scratch-path $(FUZZ_BUILD) -c release \
		--sanitize fuzzer -Xswiftc -sanitize=fuzzer,address $(SWIFTFLAGS)
	@set -e; for target in $(FUZZ_TARGETS); do \
		echo "==> $$target for $(FUZZ_SECONDS) s"; \
		rm -rf $(FUZZ_BUILD)/seeds/$$target; \
		mkdir -p $(FUZZ_BUILD)/corpus/$$target $(FUZZ_BUILD)/artifacts/$$target; \
		SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
			$(FUZZ_BUILD)/release/$$target --generate-corpus $(FUZZ_BUILD)/seeds/$$target; \
		if ! SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
			$(FUZZ_BUILD)/release/$$target -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/artifacts/$$target/ \
			$(FUZZ_BUILD)/corpus/$$target $(FUZZ_BUILD)/seeds/$$target >$(FUZZ_BUILD)/$$target.log 2>&1; then \
			tail -n 60 $(FUZZ_BUILD)/$$target.log; echo "$$target failed: see $(FUZZ_BUILD)/artifacts/$$target/"; exit 1; \
		fi; \
		grep -E '^(INFO: seed corpus|Done|stat::(number_of_executed_units|average_exec_per_sec|new_units_added))' \
			$(FUZZ_BUILD)/$$target.log; \
		echo "corpus: $$(ls $(FUZZ_BUILD)/corpus/$$target | wc -l) inputs"; \
	done

## bench: build kvbench in release mode and run the default suite: the table on stdout, JSON and SVG in bench-results/
## (BENCHFLAGS="--size large" adds the 1M-record scale points; kvbench --help lists the options)
BENCHFLAGS ?=
bench: deps
	$(SWIFT) build -c release --product kvbench $(SWIFTFLAGS)
	mkdir -p bench-results
	.build/release/kvbench --json bench-results/kvbench.json --svg bench-results/kvbench.svg $(BENCHFLAGS)

## bench-check: count with callgrind the instructions per operation of a small fixed workload (release build) and
## compare them with the committed baseline, Benchmarks/instructions.json: fails when one grew by more than 5%, and
## passes with a message when the baseline was counted with another toolchain, glibc or LMDB
## bench-check-update: count them and rewrite the baseline, on purpose, with the change that moved the counts
bench-check: deps
	$(SWIFT) build -c release --product kvbench $(SWIFTFLAGS)
	.build/release/kvbench --instructions Benchmarks/instructions.json

bench-check-update: deps
	$(SWIFT) build -c release --product kvbench $(SWIFTFLAGS)
	.build/release/kvbench --instructions Benchmarks/instructions.json --update

## crashtest: start writer processes, kill each at a random moment and check the store after each kill, at each
## durability level of CRASHTEST_DURABILITY (a killed process loses no commit at any level), then run old-schema
## writers beside migrations killed at random points (debug build; CRASHTEST_ITERATIONS kills per level and
## CRASHTEST_MIXED_ITERATIONS mixed-version rounds, CRASHTESTFLAGS="--seed 42 --verbose" for more; crashtest help run)
CRASHTEST_ITERATIONS ?= 1000
CRASHTEST_MIXED_ITERATIONS ?= 40
CRASHTEST_DURABILITY ?= full normal off
CRASHTESTFLAGS ?=
crashtest: deps
	$(SWIFT) build --product crashtest $(SWIFTFLAGS)
	@set -e; for level in $(CRASHTEST_DURABILITY); do \
		.build/debug/crashtest run --iterations $(CRASHTEST_ITERATIONS) --durability $$level $(CRASHTESTFLAGS); \
	done
	.build/debug/crashtest mixed --iterations $(CRASHTEST_MIXED_ITERATIONS) $(CRASHTESTFLAGS)

## docs: the DocC archives of KVStore, KVStoreTesting, LMDB and KVStoreReplication (.build/docs/<module>.doccarchive),
## from the catalogs in Sources/<module>/<module>.docc and the modules' symbol graphs, without a package plugin: builds
## that emit the symbol graphs of public symbols, then `docc convert` per module. Warnings (a broken link, a link to a
## symbol that is not public) are errors. Building KVStoreTesting builds KVStore and LMDB, whose graphs the same flags
## emit; KVStoreReplication is built beside it.
DOCS_BUILD := $(CURDIR)/.build/docs
DOCS_MODULES := KVStore KVStoreTesting LMDB KVStoreReplication
docs: deps
	@for target in KVStoreTesting KVStoreReplication; do \
		$(SWIFT) build $(SWIFTFLAGS) --scratch-path $(DOCS_BUILD)/build --target $$target \
			-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(DOCS_BUILD)/symbol-graphs \
			-Xswiftc -emit-extension-block-symbols || exit 1; \
	done
	@for module in $(DOCS_MODULES); do \
		rm -rf $(DOCS_BUILD)/$$module-symbols && mkdir -p $(DOCS_BUILD)/$$module-symbols && \
		cp $(DOCS_BUILD)/symbol-graphs/$$module.symbols.json $(DOCS_BUILD)/symbol-graphs/$$module@*.symbols.json \
			$(DOCS_BUILD)/$$module-symbols/ 2>/dev/null; \
		echo "docc convert Sources/$$module/$$module.docc"; \
		docc convert Sources/$$module/$$module.docc --additional-symbol-graph-dir $(DOCS_BUILD)/$$module-symbols \
			--output-path $(DOCS_BUILD)/$$module.doccarchive --fallback-display-name $$module \
			--fallback-bundle-identifier org.kvstore.$$module --warnings-as-errors || exit 1; \
	done

## lint: swift format in strict mode
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks Tools

## format: rewrite sources in the house format
format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Benchmarks Tools

clean:
	rm -rf .build
