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
# pysqlite3-binary (SQLite 3.51.1, which can deadlock) and pysqlite3 share their files: a venv
# that had the first drops both, so the install below lays pysqlite3's down whole.
$(STAMP): pyproject.toml | $(PY)
	@if $(PY) -m pip show -q pysqlite3-binary >/dev/null 2>&1; then \
		echo "replacing pysqlite3-binary with pysqlite3"; \
		$(PY) -m pip uninstall -y -q pysqlite3-binary pysqlite3; \
	fi
	$(PY) -m pip install -e '.[dev,embeddings]'
	touch $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py bootstrap_demo
	$(PY) manage.py runall

# The whole suite runs on SQLite, then again against PostgreSQL (all but the browser tests, whose
# server keeps its own SQLite file) when a server answers on $(PG_HOST):$(PG_PORT); its `test`
# database is created when missing (pytest-django then makes its own test_ copy). With CI set, a
# PostgreSQL server that does not answer fails the run instead of skipping the pass.
# `make test PYTEST_ARGS='-m postgres'` runs only the storage tests marked `postgres`, on both.
# The tests marked `own_stack` start processes on a database of their own whatever DATABASE_URL
# says (tests/conftest.py): the PostgreSQL pass skips them, as the SQLite pass ran them already.
PG_ENSURE_DB := import psycopg; c = psycopg.connect(host='$(PG_HOST)', port=$(PG_PORT), user='postgres', dbname='postgres', connect_timeout=3, autocommit=True); \
	c.execute('SELECT 1 FROM pg_database WHERE datname = %s', ['test']).fetchone() or (c.execute('CREATE DATABASE test'), print('== created the PostgreSQL database test')); c.close()

test: install
	$(PYTEST) $(PYTEST_ARGS)
	@if $(PY) -c "$(PG_ENSURE_DB)"; then \
		echo "== PostgreSQL answers on $(PG_HOST):$(PG_PORT): running the suite again against it (not the browser tests)"; \
		DATABASE_URL='$(PG_TEST_URL)' $(PYTEST) -m "not browser" $(PYTEST_ARGS); \
	elif [ -n "$${CI:-}" ]; then \
		echo "== PostgreSQL not reachable on $(PG_HOST):$(PG_PORT), and CI is set: the PostgreSQL pass must run"; exit 1; \
	else \
		echo "== PostgreSQL not reachable on $(PG_HOST):$(PG_PORT): SKIPPED the PostgreSQL pass (the suite ran on SQLite only)"; \
	fi

lint: install
	$(RUFF) check .
	$(RUFF) format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy memory chat consolidation memoryweb

# Drops queued broker messages only; the database under var/ stays.
clean:
	rm -rf var/broker
