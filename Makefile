# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install what is needed into it.

VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
HOST    ?= 127.0.0.1
PORT    ?= 8000

.PHONY: install run test lint bench examples clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
	$(PY) -m pip install --quiet -e '.[dev,soa,plot]' 2>&1 | grep -v '^WARNING: Location' || true
	$(PY) -c "import diferida, polars, fastapi, sqlalchemy, pytest, xdist, hypothesis, playwright, pymort, matplotlib"
	touch $(STAMP)

install: $(STAMP)

## run: the main job — the service (API + web calculator) on http://$(HOST):$(PORT)
run: install
	$(VENV)/bin/diferida serve --host $(HOST) --port $(PORT)

## examples: the worked examples of the specification, evaluated and explained
examples: install
	$(VENV)/bin/diferida examples

## test: every test (lint included), on two workers (a test file stays on one)
test: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/pytest -n 2 --dist loadfile

lint: install
	$(VENV)/bin/ruff check src tests bench

## bench: speed figures (not part of test)
bench: install
	bash bench/run_all.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-output
