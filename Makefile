# The two commands: `make demo` and `make test`. Both create .venv on first use.
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench lock clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
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

bench: $(STAMP)
	$(BIN)/python bench/api_decode.py
	$(BIN)/python bench/admission_cycle.py
	$(BIN)/python bench/store_ops.py
	$(BIN)/python bench/embedded_run.py --jobs 2000
	$(BIN)/kuota bench bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml bench/worlds/kueue-baseline-no-preemption.yaml --json bench/results-virtual.json
	$(BIN)/kuota bench --real-time bench/worlds/kueue-baseline.yaml bench/worlds/kueue-large-scale.yaml --json bench/results-real-time.json
	$(BIN)/python bench/placement.py

# Re-pin dependencies (needs network); commit the result.
lock: $(STAMP)
	$(BIN)/python -m pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --python-version 3.11 \
	  --no-header -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build src/*.egg-info
