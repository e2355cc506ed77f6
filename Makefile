# The README's two commands: `make demo` and `make test`. Each installs what is missing (Debian
# packages, a .venv with pinned packages: deps/install.sh; the demo only what it needs), builds once
# with ccache, then runs.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build/dev
JOBS ?= $(shell nproc)
# ccache: hit across clones (CI builds in a fresh clone) and with precompiled headers.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: deps deps-demo build build-demo test test-cpp test-py demo bench format lint clean wheel wheel-check

deps:
	@bash deps/install.sh test

deps-demo:
	@bash deps/install.sh demo

# The development build (in place: the extension lands in python/ketch), configured on every build
# (a second or two; nothing recompiles when nothing changed): CPP_TESTS=OFF leaves the GoogleTest
# suite out (`make demo`), and -USKBUILD undoes what `make wheel`'s scikit-build-core leaves behind
# in the same directory.
CPP_TESTS ?= ON
CONFIGURE = $(PY) -m cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DKETCH_INPLACE=ON \
	  -DKETCH_BUILD_TESTS=$(CPP_TESTS) -USKBUILD -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DPython_EXECUTABLE=$(abspath $(PY)) -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null

define build_steps
	@$(CONFIGURE)
	@$(PY) -m cmake --build $(BUILD) -j $(JOBS)
	@echo "$(abspath python)" > "$(SITE)/ketch-dev.pth"
endef

build: deps
	$(build_steps)

build-demo: CPP_TESTS = OFF
build-demo: deps-demo
	$(build_steps)

test-cpp: build
	@cd $(BUILD) && $(abspath $(VENV))/bin/ctest --output-on-failure -j $(JOBS)

test-py: build
	@$(PY) -m pytest -q tests

test: test-cpp test-py

# dist/: the manylinux wheel (native libraries bundled, licences in THIRD_PARTY_NOTICES) and the
# sdist (scripts/build_wheel.py says how); the development build is configured back afterwards.
wheel: build
	@$(PY) scripts/build_wheel.py; status=$$?; $(CONFIGURE); exit $$status

# CI: the wheel again (only relinks after `make build`), its notices up to date, and the wheel
# installed into a fresh venv elsewhere with no compiler on PATH, running scripts/wheel_smoke.py.
wheel-check: build
	@$(PY) scripts/build_wheel.py --check --no-sdist; status=$$?; $(CONFIGURE); exit $$status
	@bash scripts/wheel_install_check.sh

demo: build-demo
	@$(PY) examples/image_classification.py

bench: build
	@$(PY) benchmarks/run.py

format:
	@clang-format -i $$(git ls-files 'cpp/*.h' 'cpp/*.cc')
	@$(VENV)/bin/ruff format python tests examples benchmarks scripts

lint:
	@clang-format --dry-run --Werror $$(git ls-files 'cpp/*.h' 'cpp/*.cc')
	@$(VENV)/bin/ruff check python tests examples benchmarks scripts

clean:
	rm -rf build dist python/ketch/_core*.so python/ketch/libketch_re2.so python/ketch/libketch_media.so python/ketch/ketch-jq-worker
