# rankwatch — two commands do all set-up on a fresh machine:
#   make demo   create .venv, install, diagnose a bundled real incident
#   make test   install what the tests need (Python deps + Debian packages) and run them
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DEBS := mosquitto prometheus prometheus-alertmanager chromium chromium-driver

.PHONY: demo test lint bench install clean debs

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test,e2e]'
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rankwatch demo

# Debian packages the integration tests talk to (installed only when missing)
debs:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	    || echo "warning: could not install$$missing; tests that need them will be skipped"; \
	fi

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test: $(TEST_STAMP) debs
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/rankwatch generate --check   # deploy/, grafana/, docs/runbooks/ match the catalog
	$(BIN)/python -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# the noisy real-job corpora (100 MB and 1 GB, then 100 MB without NCCL INFO): rankwatch vs
# mtail --one_shot vs LC_ALL=C grep -E, median of interleaved runs (mtail and GNU time installed when missing)
bench: $(STAMP)
	@command -v mtail >/dev/null && test -x /usr/bin/time || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends mtail time >/dev/null \
	    || echo "warning: could not install mtail/time; the bench reports them as unavailable"; }
	$(BIN)/python -m bench --mix noisy --sizes 100,1000
	$(BIN)/python -m bench --mix noisy-nonccl --sizes 100 --results bench/results/noisy-nonccl.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache *.egg-info
