# The README's commands. Everything runs through the project's own virtualenv.
SHELL := /bin/bash

VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(VENV)/bin/pytest
RUFF := $(VENV)/bin/ruff
STAMP := $(VENV)/.installed

PG_HOST := 127.0.0.1
PG_PORT := 5432
PG_TEST_URL := postgresql://postgres@$(PG_HOST):$(PG_PORT)/test
# Extra arguments for both pytest runs, e.g. `make test PYTEST_ARGS='-x -k broker'`.
PYTEST_ARGS ?=

.PHONY: install run test lint migrate clean

install: $(STAMP)

# Created once; pip is upgraded only here, so `make install` on a ready tree touches nothing.
$(PY):
	@if python3.11 -c 'import sys' >/dev/null 2>&1; then \
		echo "creating $(VENV) with python3.11"; python3.11 -m venv $(VENV); \
	else \
		echo "python3.11 not found: creating $(VENV) with python3"; python3 -m venv $(VENV); \
	fi
	$(PY) -m pip install --upgrade pip

# Reinstalls only when pyproject.toml changed since the last successful install.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[dev]'
	touch $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py bootstrap_demo
	$(PY) manage.py runall

# The SQLite suite always runs. The tests marked `postgres` run a second time against
# PostgreSQL when a server answers on $(PG_HOST):$(PG_PORT); pytest's exit code 5
# ("no tests collected") is fine for that second run only.
test: install
	$(PYTEST) $(PYTEST_ARGS)
	@if $(PY) -c "import psycopg; psycopg.connect(host='$(PG_HOST)', port=$(PG_PORT), user='postgres', dbname='postgres', connect_timeout=3).close()" >/dev/null 2>&1; then \
		echo "PostgreSQL answers on $(PG_HOST):$(PG_PORT): running the postgres storage tests"; \
		status=0; DATABASE_URL='$(PG_TEST_URL)' $(PYTEST) -m postgres $(PYTEST_ARGS) || status=$$?; \
		if [ $$status -eq 5 ]; then \
			echo "no tests are marked postgres yet: nothing to run against PostgreSQL"; \
		elif [ $$status -ne 0 ]; then \
			exit $$status; \
		fi; \
	else \
		echo "PostgreSQL not reachable on $(PG_HOST):$(PG_PORT): skipping the postgres storage tests"; \
	fi

lint: install
	$(RUFF) check .
	$(RUFF) format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/mypy memory chat consolidation memoryweb

# Drops queued broker messages only; the database under var/ stays.
clean:
	rm -rf var/broker
