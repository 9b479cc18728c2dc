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
  kuota/runtime/clock.py kuota/runtime/recorder.py
COMPILED := build/mypyc
SOURCES := $(shell find src/kuota -name '*.py')

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV) || (rm -rf $(VENV) && python3 -m venv $(VENV))
	$(BIN)/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

demo: $(STAMP)
	$(BIN)/kuota demo examples/quickstart

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
	$(BIN)/python bench/embedded_run.py --jobs 2000
	$(BIN)/kuota bench bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml bench/worlds/kueue-baseline-no-preemption.yaml --json bench/results-virtual.json
	$(BIN)/kuota bench --real-time bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml --json bench/results-real-time.json
	$(BIN)/python bench/placement.py
	$(BIN)/python bench/serve_api.py --json bench/results-serve.json
	$(BIN)/python bench/tiny_jobs.py --jobs 10000 100000
	$(BIN)/python bench/sim_replay.py --json bench/results-sim.json

# Re-pin dependencies (needs network); commit the result.
lock: $(STAMP)
	$(BIN)/python -m pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --python-version 3.11 \
	  --no-header -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build src/*.egg-info
