# Trialdesk: `make run` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO_TRIALS ?= 300
# Two workers: the suite runs on both cores (override with PYTEST_ARGS= for one process).
PYTEST_ARGS ?= -n 2

.PHONY: run worker test lint fmt bench serve-prod venv migrate demo clean check-python

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' || { \
	  echo "Trialdesk needs Python 3.12 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)."; \
	  echo "Install Python 3.13 (pyenv install 3.13) or run: make PYTHON=/path/to/python3.13 ..."; \
	  exit 1; }

$(STAMP): requirements/base.txt requirements/dev.txt | check-python
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	touch $(STAMP)

venv: check-python $(STAMP)

migrate: venv
	$(PY) manage.py migrate --noinput

# Users first: the demo trials carry annotations by the demo reviewers' usernames.
demo: migrate
	$(PY) manage.py demo_users
	$(PY) manage.py seed_demo --trials $(DEMO_TRIALS) --if-empty

# `make run` serves like the product (themed 404/500 pages, hashed static files served by
# WhiteNoise), over plain HTTP on this machine; `make run DEBUG=1` shows Django's debug pages.
DEBUG ?= 0
RUN_ENV := DJANGO_DEBUG=$(DEBUG) SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 \
	CSRF_COOKIE_SECURE=0 SECURE_HSTS_SECONDS=0

# One task worker beside the server: grading and re-judging run there, never in a request.
run: demo
	@[ "$(DEBUG)" = 1 ] || $(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Starting a task worker (manage.py grading_worker) beside the server."
	$(RUN_ENV) $(PY) manage.py grading_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(RUN_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

# A task worker alone (production runs as many as it needs, on any machine).
worker: migrate
	$(PY) manage.py grading_worker --no-reload

# The suite makes its own test database: no development database, no demo data needed.
test: venv
	$(PY) -m pytest $(PYTEST_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy .
	$(VENV)/bin/lint-imports

fmt: venv
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: venv
	$(PY) bench/run.py

# Production serving: DEBUG off, static files collected and served by WhiteNoise.
serve-prod: venv
	$(PY) manage.py collectstatic --noinput
	$(PY) manage.py migrate --noinput
	$(PY) manage.py check --deploy --fail-level WARNING
	$(PY) manage.py grading_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(VENV)/bin/gunicorn config.wsgi:application --bind $(HOST):$(PORT) \
	  --workers $${WEB_CONCURRENCY:-2} --access-logfile -

clean:
	rm -rf $(VENV) var staticfiles build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
