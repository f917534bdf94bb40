# The two commands a new user needs:  make demo  (set up + run)  and  make test.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Everything: the tests (dev) and the embedded model (local: compiles llama.cpp on first install,
# about 10 minutes on 2 cores; `pip install deflectbench` alone compiles nothing). A portable build:
# -march=native can pick CPU paths (AMX) that some virtual machines advertise but do not allow.
CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install demo test lint format bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(CMAKE_ARGS)" $(BIN)/python -m pip install -e ".[dev,local]"
	# wheels of the light install, so tests/e2e/test_light_install.py installs offline
	$(BIN)/python -m pip wheel --quiet --wheel-dir $(VENV)/wheelhouse . "setuptools>=77" wheel
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/deflectbench run

# -n auto --dist worksteal (pytest-xdist): one worker per core, and a worker that runs dry takes
# queued tests from a busy one, so the few long end-to-end tests never leave a core idle.
test: install
	$(BIN)/python -m pytest -q -n auto --dist worksteal

# ruff, then the type checker over src at the strictness pyproject.toml's [tool.mypy] documents.
lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src

format: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
