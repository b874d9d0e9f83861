# Two commands do all set-up: `make lab` and `make test` (see README.md).
# Each one creates .venv when needed and installs the kit into it from
# pyproject.toml, the single source of dependencies.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
JUPYTER_PORT ?= 8888
BENCH_ARGS ?=
NB     ?= notebooks/*.ipynb

.PHONY: lab test bench notebooks clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# One stamp per set of extras: re-install when pyproject.toml changes. pip byte-compiles what it
# installs one file at a time: `make test`'s fresh install took 115 s so, and 55 s without it on
# the same 2 cores; compileall then does the same work on every core (27 s). Like pip, it
# passes over files that do not compile (test files written for a newer Python).
# A set with the `backends` extra pins PyTorch to the version `make bench` needs (torchcodec
# 0.13 is built for 2.13): one PyTorch for both targets. The extra itself asks for any torch, so
# that a learner's own is kept; unpinned, pip takes the newest, and where a CPU build of 2.13.0
# lies beside pip (this project's CI machines) the pin installs 2.5 GB less: 41 s against 81 s.
TORCH_PIN ?= torch==2.13.0
$(VENV)/.installed-%: pyproject.toml | $(PY)
	@$(PY) -m pip uninstall --quiet --yes datakit 2>/dev/null || true  # the kit's name before tf-datakit
	$(PY) -m pip install --quiet --no-compile -e ".[$(subst +,$(comma),$*)]" \
		$(if $(findstring backends,$*),"$(TORCH_PIN)")
	$(PY) -c "import compileall, sysconfig; compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0)"
	@touch $@

comma := ,

# The core route's needs only (base, notebook, video): notebooks 14 (transform) and 24
# (backends) install their extra from their first code cell when it is missing.
# It opens on notebooks/START.md (both editions of the route, English and Korean), shown
# rendered: the venv's JupyterLab opens Markdown files in its preview (the overrides file of
# its own settings folder; nothing outside .venv is written).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
lab: $(VENV)/.installed-notebook+video
	@mkdir -p $(LAB_SETTINGS) && test -e $(LAB_SETTINGS)/overrides.json || printf '%s\n' \
		'{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}}}' \
		> $(LAB_SETTINGS)/overrides.json
	JUPYTER_PORT=$(JUPYTER_PORT) $(VENV)/bin/jupyter lab --notebook-dir=notebooks \
		--LabApp.default_url=/lab/tree/START.md \
		--no-browser --allow-root --ip=127.0.0.1 --port=$(JUPYTER_PORT)

# Three pytest workers (pytest-xdist), each taking a whole test file or notebook at a time.
# Many tests wait (for processes to start, servers, kernels, a browser): with two workers the
# suite kept 1.5 of 2 cores busy (a clean clone, 884 s); with three, 732 s on the same
# machine, every test the same. TEST_WORKERS=0 runs serially.
# ruff, then mypy over datakit/ (seconds each), with the project's settings from
# pyproject.toml's [tool.ruff] and [tool.mypy], then the CI workflow against GitHub's
# workflow schema (check-jsonschema ships it: no network).
TEST_WORKERS ?= 3
test: $(VENV)/.installed-test+video+transform+backends
	$(PY) -m ruff check .
	$(PY) -m mypy --config-file pyproject.toml datakit
	$(PY) -m check_jsonschema --builtin-schema vendor.github-workflows .github/workflows/ci.yml
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Benchmarks (minutes; never part of `make test`). BENCH_ARGS="--quick" checks the harness;
# BENCH_ARGS="--arrow-only" runs only parse="arrow" against pyarrow's (and polars') own reader
# on the numeric and the housing-like table (benchmarks/arrow_tables.py, about 6 min);
# BENCH_ARGS="--video-peers-only" runs only the video comparison against torchcodec, decord and
# the TF tutorial (benchmarks/video_peers.py, about 30 min); BENCH_ARGS="--converter-only" only the
# converter against its work's floor (benchmarks/converter_floor.py). torchcodec needs FFmpeg's shared
# libraries from the system (Debian: apt-get install libavcodec59 libavformat59 libavutil57
# libswscale6 libswresample4 libavdevice59 libavfilter8); a peer that does not import is
# skipped with its reason.
bench: $(VENV)/.installed-test+video+bench
	$(PY) -m benchmarks $(BENCH_ARGS)

# Re-execute notebooks from a fresh kernel and store their outputs (NB=path to pick one).
notebooks: $(VENV)/.installed-test+video+transform+backends
	$(PY) tests/run_notebooks.py $(NB)

clean:
	rm -rf $(VENV)
