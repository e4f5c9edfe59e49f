# Two commands set everything up on a fresh machine with nothing but Python 3.11:
#   make run    serve the app on http://127.0.0.1:8000 (SQLite, demo users)
#   make test   run the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The stamp changes whenever a requirements file does, so `make` reinstalls exactly then.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements/web.txt requirements-dev.txt pyproject.toml | cksum | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: messages run test lint bench install clean lock

# Python keeps the bytecode it compiles (__pycache__, which git ignores) even where the environment
# says not to (PYTHONDONTWRITEBYTECODE, set on the machines this project is built on): the tests
# start a few hundred Python processes (commands, job workers, servers), and without the caches
# each compiled the project's modules again, 0.45 s of the 2.5 s a `manage.py check` takes; pytest
# keeps the test modules it rewrites for each of its processes the same way.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): requirements.txt requirements/web.txt requirements-dev.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# --no-compile: Python compiles a module the first time it is imported and keeps the bytecode
	@# (PYTHONDONTWRITEBYTECODE above), so only what a run imports is compiled (about 4,200 modules
	@# for the libraries the tests use), not all 17,389: pip compiling them all took 82 s of its
	@# 152 s here, on one core
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-dev.txt
	@# the project's own packages, editable: `python -m nsmcore` and the apps import from any folder
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP)

# axe-core, which the browser tests load into each page to check its accessibility: from the npm
# registry, at the version and hash package-lock.json pins
AXE := node_modules/axe-core/axe.min.js
$(AXE): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	@echo "Open http://$(HOST):$(PORT)/ and log in with one of the users above."
	@# no autoreloader: a process of its own holding every app (~70 MiB) that only a developer
	@# editing the code needs (they run `python manage.py runapp`, which reloads)
	$(BIN)/python manage.py runapp $(HOST):$(PORT) --noreload

# pytest-xdist with one worker more than the cores: many tests wait on a server, a worker or a
# browser, and the spare worker fills that time (on 2 cores: 454 s with 3 workers, 528 s with 2);
# tests handed out two at a time (--maxschedchunk), longest first (tests/conftest.py), so that no
# worker is left holding a queue of long tests while the others wait (xdist's default gives each
# worker a quarter of its share up front); the slowest tests printed at the end
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
test: $(STAMP) $(AXE)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxschedchunk 2 --durations=15

# the interface's catalogues (docs/translating.md): extract the marked strings into locale/de,
# then, once translated, compile them (the .mo files are committed; tests check they match)
MESSAGES_IGNORE = --ignore=.venv --ignore=node_modules --ignore=staticfiles --ignore=tests \
	--ignore=nsmcore --ignore=benchmarks --ignore=docs --ignore=var --ignore=static/vendor
messages: $(STAMP)
	$(BIN)/python manage.py makemessages -l de -d django --no-obsolete $(MESSAGES_IGNORE)
	$(BIN)/python manage.py makemessages -l de -d djangojs --no-obsolete $(MESSAGES_IGNORE)
	$(BIN)/python manage.py compilemessages -l de --ignore=.venv

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache

# Recompile the lock files (exact pins with hashes) after changing a requirements/*.in file.
# pip-tools lives in a venv of its own: the project's environment never needs it.
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" .venv-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	--no-emit-index-url --no-emit-find-links
lock:
	@test -x .venv-lock/bin/pip-compile || ($(PYTHON) -m venv .venv-lock && .venv-lock/bin/pip install --quiet pip-tools==7.6.2)
	$(PIP_COMPILE) -o requirements/web.txt requirements/web.in
	$(PIP_COMPILE) -o requirements.txt requirements/worker.in
	$(PIP_COMPILE) -o requirements-dev.txt requirements/dev.in
