# Thin wrapper over CMake: the short commands of README.md.
BUILD      ?= build
BUILD_REL  ?= build-release
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake

.PHONY: all build test bench torture clean

all: build

build:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Debug -DCAIRN_SANITIZE=ON
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The benchmark report runs an optimised build without sanitizers.
bench:
	$(CMAKE) -S . -B $(BUILD_REL) -DCMAKE_BUILD_TYPE=Release -DCAIRN_SANITIZE=OFF
	$(CMAKE) --build $(BUILD_REL) -j $(JOBS)
	@sh bench/run.sh $(BUILD_REL)

# Long power-cut and big-volume runs: hours, not for CI (see docs/TESTING.md).
torture:
	$(CMAKE) -S . -B $(BUILD_REL) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAIRN_SANITIZE=OFF -DCAIRN_TORTURE=ON
	$(CMAKE) --build $(BUILD_REL) -j $(JOBS)
	cd $(BUILD_REL) && ctest --output-on-failure -L torture

clean:
	rm -rf $(BUILD) $(BUILD_REL)
