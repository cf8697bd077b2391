# Thin wrapper over CMake: the short commands of README.md.
BUILD      ?= build
BUILD_REL  ?= build-release
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake
PYTHON     ?= python3
VENV       ?= .venv
VPY        := $(VENV)/bin/python

.PHONY: all build venv venv-bench test test-pip test-cross bench torture fuzz clean

all: build venv

# The tests' build: ASan and UBSan at -O1 (session 30: the native tests took 921 s of
# CPU at -O0, 692 s at -O1).
build:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Debug -DCAIRN_SANITIZE=ON -DCMAKE_C_FLAGS_DEBUG="-g -O1"
	$(CMAKE) --build $(BUILD) -j $(JOBS)

# The project's Python environment (python/requirements.txt, pinned) with the
# bindings (package cairn in python/) linked in by a .pth file. pip runs only
# when the environment is missing or the requirements changed.
$(VENV)/.stamp: python/requirements.txt
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --disable-pip-version-check -r python/requirements.txt
	touch $@

venv: $(VENV)/.stamp
	@$(VPY) -c 'import pathlib, sys, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "cairn.pth").write_text(sys.argv[1] + "\n")' "$(CURDIR)/python"

# pytest gets the library and the C tool of this build (CAIRN_TOOL: the tests
# of cairn.Image against `cairn`).
test: build venv
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	CAIRN_LIB="$(abspath $(BUILD))/python/libcairn_py.so" CAIRN_TOOL="$(abspath $(BUILD))/tools/cairn" \
	  $(VPY) -m pytest -c python/pytest.ini python/tests
	@$(MAKE) --no-print-directory test-pip
	@$(MAKE) --no-print-directory test-cross

# The Python package as a user installs it: pip install ./python into a fresh
# virtualenv outside the repository, an image built and read from Python,
# pip wheel, and a wheel from the sdist (tests/python/test_pip.sh; "skipped"
# when the package index cannot be reached).
test-pip:
	PYTHON=$(PYTHON) sh tests/python/test_pip.sh

# The C tests built for 32-bit ARM and big-endian s390x and run under
# qemu-user (tests/cross.sh); a target without its cross compiler or qemu
# is skipped with a message. build-armhf/, build-s390x/.
CROSS_TARGETS ?= armhf s390x
test-cross:
	JOBS=$(JOBS) CMAKE=$(CMAKE) NATIVE_BUILD=$(BUILD) sh tests/cross.sh $(CROSS_TARGETS)

# The benchmark suite's extra packages (bench/requirements.txt, pinned):
# littlefs-python and fatfs-ng for the comparison runs, matplotlib for the plots.
$(VENV)/.bench-stamp: bench/requirements.txt $(VENV)/.stamp
	$(VPY) -m pip install -q --disable-pip-version-check -r bench/requirements.txt
	touch $@

venv-bench: venv $(VENV)/.bench-stamp

# The benchmark report runs an optimised build without sanitizers.
# Only what the report needs: the Python library and bench/cpu_cost.
bench:
	$(CMAKE) -S . -B $(BUILD_REL) -DCMAKE_BUILD_TYPE=Release -DCAIRN_SANITIZE=OFF
	$(CMAKE) --build $(BUILD_REL) -j $(JOBS) --target cairn_py cpu_cost
	@sh bench/run.sh $(BUILD_REL)

# Long power-cut and big-volume runs: hours, not for CI (see docs/TESTING.md).
torture:
	$(CMAKE) -S . -B $(BUILD_REL) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAIRN_SANITIZE=OFF -DCAIRN_TORTURE=ON
	$(CMAKE) --build $(BUILD_REL) -j $(JOBS)
	cd $(BUILD_REL) && ctest --output-on-failure -L torture

# Coverage-guided fuzzing with libFuzzer (docs/TESTING.md "Fuzzing"): builds
# tests/fuzz with clang and runs each target for FUZZ_SECONDS on one core,
# starting from its corpus; crashes land in $(BUILD_FUZZ)/crashes/<target>/.
# FUZZ_TARGETS picks the targets.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= image ops
FUZZ_CC      ?= clang
fuzz:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	  echo "make fuzz: $(FUZZ_CC) not found; install the Debian packages clang and libclang-rt-14-dev"; exit 1; }
	@mkdir -p $(BUILD_FUZZ); printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	  > $(BUILD_FUZZ)/probe.c; \
	$(FUZZ_CC) -fsanitize=fuzzer $(BUILD_FUZZ)/probe.c -o $(BUILD_FUZZ)/probe >/dev/null 2>&1 || { \
	  echo "make fuzz: $(FUZZ_CC) cannot link libFuzzer; install the Debian package libclang-rt-14-dev"; exit 1; }
	CC=$(FUZZ_CC) $(CMAKE) -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug -DCAIRN_FUZZ=ON -DCAIRN_SANITIZE=OFF
	$(CMAKE) --build $(BUILD_FUZZ) -j $(JOBS) $(foreach t,$(FUZZ_TARGETS),--target fuzz_$(t))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD_FUZZ)/corpus/$$t $(BUILD_FUZZ)/crashes/$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  case $$t in ops) len="-max_len=300 -len_control=0";; *) len="-max_len=65536";; esac; \
	  $(BUILD_FUZZ)/tests/fuzz/fuzz_$$t $(BUILD_FUZZ)/corpus/$$t tests/fuzz/corpus/$$t \
	    tests/fuzz/regress/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 \
	    $$len -print_final_stats=1 \
	    -artifact_prefix=$(BUILD_FUZZ)/crashes/$$t/ || exit 1; \
	done

clean:
	rm -rf $(BUILD) $(BUILD_REL) $(BUILD_FUZZ) build-armhf build-s390x
