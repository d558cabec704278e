# quiver — two commands do all the set-up on a fresh Debian 12 machine:
#   make run    install what is missing, build Release, run the main job
#   make test   install what is missing, build, run every test
JOBS ?= $(shell nproc)
# ccache (when installed) keys objects by paths relative to the checkout, so
# the release, pip and test builds share them.
export CCACHE_BASEDIR := $(CURDIR)
# Precompiled headers (CMakeLists.txt, QUIVER_PCH) hit ccache only with
# these sloppiness settings.
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
BUILD := build/release
ASAN_BUILD := build/debug-asan

.PHONY: run test deps build build-test build-main build-asan build-san unit-test asan-test interop-deps clean build-fuzz fuzz-test \
	build-tsan tsan-test

# scripts/install-deps.sh runs once per version of itself on this machine:
# the stamp build/.deps-<hash of the script> marks it done (a fresh clone,
# `make clean` or an edited script runs it again).
DEPS_STAMP := build/.deps-$(shell sha256sum scripts/install-deps.sh | cut -c1-16)

deps: $(DEPS_STAMP)

$(DEPS_STAMP): scripts/install-deps.sh
	./scripts/install-deps.sh
	mkdir -p build && rm -f build/.deps-* && touch $@

build: deps
	cmake --preset release -DQUIVER_BUILD_ALL_UNIT_TESTS=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# What the main job needs and nothing more: the quiver binary (no tests, no
# benchmarks of other tools), so a newcomer's first `make run` is short;
# `make test` builds the rest.
build-main: deps
	cmake --preset release >/dev/null
	cmake --build $(BUILD) -j$(JOBS) --target quiver

build-asan: deps
	cmake --preset debug-asan >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

run: build-main
	./$(BUILD)/quiver demo

interop-deps:
	./scripts/install-interop.sh
	./bench/install-duckdb.sh

unit-test: build interop-deps
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600

# The sanitizer build is the `fuzz` preset: clang with ASan + UBSan (and
# libFuzzer coverage), tests included, warnings as errors. Every test but the
# npm interop, benchmark, install and Python ones runs again in it (the
# fuzz/crash corpus and byte-mutation sweeps above all), and then every
# libFuzzer target runs FUZZ_SECONDS seconds seeded from arrow-testing and
# fuzz/corpus/<name>/; a crash, leak or sanitizer report fails `make test`
# and prints the input. (`make build-asan` still builds the GCC debug-asan
# preset for local use.) The objstore tests (Ceph RGW, HAProxy) run once, in
# the release build. One sanitizer build instead of two keeps `make test`
# within its time budget on two cores.
SAN_BUILD := build/fuzz
FUZZ_SECONDS ?= 20

build-san: deps
	cmake --preset fuzz >/dev/null
	cmake --build $(SAN_BUILD) -j$(JOBS)

build-fuzz: build-san

# -E: test executables not built in this tree appear as placeholders
# <target>_NOT_BUILT (the bench tests, not built under the sanitizers).
asan-test: build-san
	cd $(SAN_BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 900 -LE "interop|bench|install|python|scale|objstore|style|docs" -E "_NOT_BUILT$$"

# ThreadSanitizer (issue 18): the tests of the layers that run on several
# threads — the SQL engine's parallel pipelines, the join layer, the server —
# built with clang -fsanitize=thread and run (labels sql, join, server; not
# the npm interop, benchmark or scale-1 ones). Run by .ci/run after
# `make test` (the TSan build does not fit make test's 30-minute budget on
# two cores); `make tsan-test` locally.
TSAN_BUILD := build/tsan
TSAN_TARGETS := quiver_sql_tests quiver_join_tests quiver_server_tests quiver

build-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target $(TSAN_TARGETS)

tsan-test: build-tsan
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -j$(JOBS) --timeout 1200 -L "sql|join|server" -LE "interop|bench|install|python|scale|cli|objstore"

fuzz-test: build-san
	./scripts/run-fuzzers.sh $(FUZZ_SECONDS)

# The release build without the unit-test executables that only the
# sanitizer pass runs (CMakeLists.txt, QUIVER_SANITIZER_ONLY_LABELS), then
# scripts/make-test.sh: the release tests with the sanitizer build beside
# them at nice 19, then the sanitizer tests (every unit test) and the
# fuzzers. `make unit-test` (everything in Release), `make asan-test`,
# `make fuzz-test` run one step.
build-test: deps
	cmake --preset release -DQUIVER_BUILD_ALL_UNIT_TESTS=OFF >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

test: build-test interop-deps
	JOBS=$(JOBS) MAKE=$(MAKE) ./scripts/make-test.sh

clean:
	rm -rf build
