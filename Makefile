# Two set-up commands on a fresh machine: `make run` and `make test` (see README's Quick start).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
APT_PACKAGES := zookeeper kcat

.PHONY: run test venv test-deps system-deps bench completions clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e . --config-settings editable_mode=compat  # a .pth path entry: no import-hook finder on every CLI start
	touch $@

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet -e '.[test,spark]' --config-settings editable_mode=compat
	touch $@

venv: $(STAMP)

## Start the embedded coordinator on 127.0.0.1:9092 with the embedded store (no ZooKeeper needed).
run: $(STAMP)
	$(BIN)/groupctl coordinator run --host 127.0.0.1 --port 9092 --data-dir .groupctl-data

## Install what the tests need (venv, test deps, the spark extra, Debian's zookeeper, kcat and a JRE) and run them all.
test: $(TEST_STAMP) system-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

system-deps:
	@missing=""; \
	test -f /usr/share/java/zookeeper.jar || missing="$$missing zookeeper"; \
	command -v kcat >/dev/null 2>&1 || missing="$$missing kcat"; \
	command -v java >/dev/null 2>&1 || missing="$$missing openjdk-17-jre-headless"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing:$$missing (install them with your package manager; tests that need them will fail in CI)"; \
	  fi; \
	fi

bench: $(TEST_STAMP) system-deps
	$(BIN)/python -m bench.run_all

completions: $(STAMP)
	$(BIN)/python -m groupctl.cli.completions completions

clean:
	rm -rf $(VENV) .groupctl-data .pytest_cache
