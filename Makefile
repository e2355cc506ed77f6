# The README's two commands: `make demo` and `make test`. Each installs what is missing (Debian
# packages from deps/apt.txt, .venv from deps/requirements.txt), builds once with ccache, then runs.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build/dev
JOBS ?= $(shell nproc)
# ccache: hit across clones (CI builds in a fresh clone) and with precompiled headers.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: deps build test test-cpp test-py demo bench format lint clean

deps:
	@bash deps/install.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	@$(PY) -m cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DKETCH_INPLACE=ON \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DPython_EXECUTABLE=$(abspath $(PY)) -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null

build: deps $(BUILD)/build.ninja
	@$(PY) -m cmake --build $(BUILD) -j $(JOBS)
	@echo "$(abspath python)" > "$(SITE)/ketch-dev.pth"

test-cpp: build
	@cd $(BUILD) && $(abspath $(VENV))/bin/ctest --output-on-failure -j $(JOBS)

test-py: build
	@$(PY) -m pytest -q tests

test: test-cpp test-py

demo: build
	@$(PY) examples/image_classification.py

bench: build
	@$(PY) benchmarks/run.py

format:
	@clang-format -i $$(git ls-files 'cpp/*.h' 'cpp/*.cc')
	@$(VENV)/bin/ruff format python tests examples benchmarks

lint:
	@clang-format --dry-run --Werror $$(git ls-files 'cpp/*.h' 'cpp/*.cc')
	@$(VENV)/bin/ruff check python tests examples benchmarks

clean:
	rm -rf build python/ketch/_core*.so python/ketch/libketch_re2.so
