# The two commands: `make demo` and `make test`. Both create .venv on first use.
# The interpreter .venv is made from: see tools/pick-python (PY=... overrides).
PY ?= $(shell sh tools/pick-python)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench lock clean compiled test-compiled

# The hot path compiled with mypyc into an overlay of src/ (build/mypyc) that
# `make bench` runs on: a second build of the same source, checked by
# `make test-compiled` to decide exactly as the interpreted one.
HOT := kuota/scheduler kuota/quota kuota/queueing kuota/controllers/kueue.py kuota/api/hooks.py \
  kuota/api/conditions.py \
  kuota/store/memory.py kuota/store/codec.py kuota/runtime/manager.py \
  kuota/runtime/informer.py kuota/runtime/workqueue.py kuota/sim/bench.py \
  kuota/store/events.py kuota/store/kinds.py kuota/store/copier.py \
  kuota/controllers/jobframework.py \
  kuota/runtime/clock.py kuota/runtime/recorder.py \
  kuota/sim/fastreplay.py kuota/sim/fast_meter.py kuota/sim/fast_workloads.py \
  kuota/sim/replay_series.py \
  kuota/controllers/kuotadev/bizrq/accounts.py kuota/controllers/kuotadev/bizrq/status_cas.py \
  kuota/controllers/kuotadev/bizrq/object_webhook.py
COMPILED := build/mypyc
SOURCES := $(shell find src/kuota -name '*.py')

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV) || (rm -rf $(VENV) && python3 -m venv $(VENV))
	$(BIN)/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# The demo runs the build users get: the compiled hot path when a C compiler
# is there (compiled once into build/mypyc, again only when a source changes),
# else the interpreted one, with a notice on stderr.
HAVE_CC = $(BIN)/python -c "import os, shutil, sys, sysconfig; \
  cc = os.environ.get('CC') or sysconfig.get_config_var('CC') or 'cc'; \
  sys.exit(shutil.which(cc.split()[0]) is None)"

demo: $(STAMP)
	@build=; \
	if $(HAVE_CC); then \
	  $(MAKE) -s -q compiled 2>/dev/null || echo "kuota: compiling the hot path with mypyc, once (a few minutes)" >&2; \
	  if $(MAKE) -s compiled >/dev/null 2>&1; then build=$(COMPILED); \
	  else echo "kuota: notice: the mypyc compile failed (see $(COMPILED)/mypyc.log): running the interpreted build" >&2; fi; \
	else echo "kuota: notice: no C compiler found: running the interpreted build (slower; with gcc or clang, make demo compiles the hot path)" >&2; fi; \
	env $${build:+PYTHONPATH=$$build} $(BIN)/kuota demo examples/quickstart

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 tests

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	cd src && ../$(BIN)/mypy --follow-imports=silent --ignore-missing-imports $(HOT)

$(COMPILED)/.stamp: $(STAMP) $(SOURCES) Makefile
	rm -rf $(COMPILED) && mkdir -p $(COMPILED) && cp -r src/kuota $(COMPILED)/
	cd $(COMPILED) && ../../$(BIN)/mypyc --follow-imports=silent --ignore-missing-imports \
	  $(HOT) > mypyc.log 2>&1 || (tail -40 mypyc.log; exit 1)
	touch $@

compiled: $(COMPILED)/.stamp

# The whole suite on the compiled build, but for the tests that patch module
# attributes (marked interpreted).
test-compiled: export PYTHONPATH = $(COMPILED)
test-compiled: $(COMPILED)/.stamp
	$(BIN)/python -c "import kuota; assert kuota.build() == 'mypyc'"
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider -m "not interpreted" tests

# On the compiled build (the figures name it); PYTHONPATH=build/mypyc runs any
# kuota command on it.
bench: export PYTHONPATH = $(COMPILED)
bench: $(COMPILED)/.stamp
	$(BIN)/python bench/api_decode.py
	$(BIN)/python bench/admission_cycle.py
	$(BIN)/python bench/store_ops.py
	$(BIN)/python bench/bizrq_admission.py
	$(BIN)/python bench/dra_charges.py
	$(BIN)/python bench/embedded_run.py --jobs 2000
	$(BIN)/kuota bench bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml bench/worlds/kueue-baseline-no-preemption.yaml --json bench/results-virtual.json
	$(BIN)/kuota bench --real-time bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml --json bench/results-real-time.json
	$(BIN)/python bench/placement.py
	$(BIN)/python bench/cluster_mode.py bench/worlds/kueue-baseline.yaml --json bench/results-cluster-mode.json
	$(BIN)/python bench/serve_api.py --json bench/results-serve.json
	$(BIN)/python bench/tiny_jobs.py --jobs 10000 100000
	$(BIN)/python bench/sim_replay.py --json bench/results-sim.json
	$(BIN)/python bench/predict_error.py --preset openb --samples 100 --json bench/results-predict-openb.json
	$(BIN)/python bench/predict_error.py --preset dlrm --samples 100 --json bench/results-predict-dlrm.json

# Re-pin dependencies (needs network); commit the result.
lock: $(STAMP)
	$(BIN)/python -m pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --python-version 3.11 \
	  --no-header -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build src/*.egg-info
