# ssdlab: `make demo` runs the quick suite on a temporary file and renders its review;
# `make test` runs the whole test suite. Both set everything up first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= demo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)

.PHONY: demo test setup venv fio chromium lint clean

demo: setup
	@rm -rf "$(DEMO_OUT)/quick"
	@$(BIN)/ssdlab run quick --out "$(DEMO_OUT)/quick" --label "demo: temporary file"
	@$(BIN)/ssdlab report "$(DEMO_OUT)/quick" -o "$(DEMO_OUT)/quick-review.html"

test: setup chromium
	$(BIN)/python -m pytest

setup: venv fio

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "ssdlab needs Python 3.11 or newer (found $$($(PYTHON) --version 2>&1)); set PYTHON=" >&2; exit 1; }
	@$(PYTHON) -m venv "$(VENV)" 2>/dev/null || { \
	  echo "ssdlab: python venv module missing; installing Debian package python3-venv"; \
	  $(call apt_install,python3-venv) && $(PYTHON) -m venv "$(VENV)"; }
	@echo "ssdlab: installing ssdlab and its Python dependencies into $(VENV)"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch "$@"

# apt_install PACKAGE: install a Debian package (as root or with passwordless sudo), or explain.
apt_install = { command -v apt-get >/dev/null 2>&1 || { \
	  echo "ssdlab: cannot install $(1): no apt-get here; install it with your package manager \
	(or use environment.yml with conda-forge)" >&2; exit 1; }; \
	$(SUDO) apt-get update -qq >/dev/null && \
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(1) >/dev/null || { \
	  echo "ssdlab: 'apt-get install $(1)' failed; install $(1) yourself and re-run" >&2; exit 1; }; }

fio:
	@command -v fio >/dev/null 2>&1 || { \
	  echo "ssdlab: fio not found; installing it with the system package manager (apt-get install fio)"; \
	  $(call apt_install,fio); }
	@fio --version >/dev/null

chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "ssdlab: chromium not found (the report tests render in headless Chromium); installing it"; \
	  $(call apt_install,chromium); }

lint: venv
	$(BIN)/ruff format --check ssdlab tests benchmarks
	$(BIN)/ruff check ssdlab tests benchmarks

clean:
	rm -rf "$(VENV)" "$(DEMO_OUT)" tests/artifacts .pytest_cache
