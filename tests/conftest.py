from __future__ import annotations

import gc

import pytest

from deflectbench.benchmark import default_benchmark


@pytest.fixture
def benchmark():
    return default_benchmark()


def pytest_sessionfinish(session, exitstatus):
    # Collect leftover event loops before pytest's plugins tear down: their finalizers running
    # inside a later ast.parse trip a CPython 3.11.7 bug (gh-106905, fixed in 3.11.8).
    gc.collect()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Same CPython bug: pytest renders a failure's traceback with ast.parse; collect first so a
    # finalizer cannot run inside it and turn one failed test into an INTERNALERROR.
    if call.excinfo is not None:
        gc.collect()
