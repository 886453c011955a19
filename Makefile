# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install what is needed into it, at the versions of
# constraints.txt (refreshed with `make lock`).

VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
HOST    ?= 127.0.0.1
PORT    ?= 8000
PIP     := $(PY) -m pip install --quiet --disable-pip-version-check
QUIET   := 2>&1 | grep -v '^WARNING: Location' || true
# two workers; a worker that runs out of tests takes half of the other's
# (worksteal), so a large file (the accessibility states) is shared too
PYTEST  := $(VENV)/bin/pytest -n 2 --dist worksteal
# the type check of src/ ([tool.mypy] in pyproject.toml: files, baseline)
MYPY    := $(VENV)/bin/mypy
# the engine's tests, run a second time without the speed layer's unstable
# Polars APIs (src/diferida/speed, docs/speed.md) by `make test-full`; `make
# test` holds the layer off by a shadow comparison (tests/test_speed_shadow.py)
CORE_TESTS := tests/test_19_*.py tests/test_spec_examples.py tests/test_properties.py \
	tests/test_validation*.py tests/test_dates*.py tests/test_regime.py \
	tests/test_explanation.py tests/test_signable_determination.py \
	tests/test_batch_files.py tests/test_service_evaluator.py tests/test_sentences_true.py \
	tests/test_rules_bounds.py
# ... except those that end before the engine runs, whatever the switch (a bad
# rules file refused as it is read): the first run holds them
CORE_NOT := -k "not refuses_a_bad_rules_file"

# pytest keeps each test module, its asserts rewritten, as bytecode in
# __pycache__; with PYTHONDONTWRITEBYTECODE set (some images set it) every
# run and every worker compiles them all again: 7 s more per process here
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run test test-full check lint bench examples lock clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) -c constraints.txt -e '.[dev,soa,plot]' $(QUIET)
	$(PY) -c "import diferida, polars, fastapi, sqlalchemy, pytest, xdist, hypothesis, playwright, pymort, matplotlib, weasyprint"
	touch $(STAMP)

install: $(STAMP)

## run: the main job — the service (API + web calculator) on http://$(HOST):$(PORT)
run: install
	$(VENV)/bin/diferida serve --host $(HOST) --port $(PORT)

## examples: the worked examples of docs/rules.md §8, evaluated and explained
examples: install
	$(VENV)/bin/diferida examples

## test: lint and every distinct check once, the browser and PostgreSQL
## ones included (what CI runs before a merge). As root it installs Debian's
## chromium and postgresql when missing; it starts a throw-away PostgreSQL
## server (scripts/with-test-services).
test: install
	$(VENV)/bin/ruff check src tests bench
	$(MYPY)
	scripts/with-test-services $(PYTEST)

## test-full: the whole cross-product: axe on every state in both languages,
## the stories at 1280 and 375 px, every property at ten times its examples,
## and the engine's tests again with the speed layer off. A change to
## constraints.txt or src/diferida/speed must pass it (CONTRIBUTING.md).
test-full: install
	$(VENV)/bin/ruff check src tests bench
	$(MYPY)
	DIFERIDA_TEST_TIER=full scripts/with-test-services $(PYTEST)
	DIFERIDA_TEST_TIER=full DIFERIDA_SPEED_LAYER=off $(PYTEST) $(CORE_NOT) $(CORE_TESTS)

## check: the fast loop: lint, the type check and every test but the browser, PostgreSQL,
## slow and real-PDF (pdf) ones
check: install
	$(VENV)/bin/ruff check src tests bench
	$(MYPY)
	$(PYTEST) -m "not browser and not postgres and not slow and not pdf"

lint: install
	$(VENV)/bin/ruff check src tests bench

## bench: speed figures (not part of test)
bench: install
	bash bench/run_all.sh

## lock: refresh constraints.txt with the newest versions pyproject.toml allows
lock:
	rm -rf .venv-lock && python3 -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev,soa,plot]'
	{ echo "# The tested set of versions: every dependency of diferida and of its extras"; \
	  echo "# (dev, soa, plot), as installed by 'make' into .venv (pip -c)."; \
	  echo "# Refresh with 'make lock' (a fresh venv, the newest versions pyproject.toml"; \
	  echo "# allows, then 'make test'); commit this file with the change."; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .venv-lock
	@echo "constraints.txt refreshed: run 'make test', then commit it"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis test-output
