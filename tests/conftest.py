from __future__ import annotations

import gc
import os

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: llama tests then run as they come
    fcntl = None

import pytest

from deflectbench.benchmark import default_benchmark


@pytest.fixture
def benchmark():
    return default_benchmark()


@pytest.fixture(autouse=True)
def _one_bundled_model_at_a_time(request, tmp_path_factory):
    """Tests marked ``llama`` take turns across pytest-xdist workers (a lock file the workers
    share): llama.cpp runs on every core, and two such runs at once each took twice as long,
    past their commands' time limits on a loaded machine. Other tests run beside them."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if fcntl is None or worker is None or request.node.get_closest_marker("llama") is None:
        yield
        return
    lock = tmp_path_factory.getbasetemp().parent / "bundled-model.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _each_test_in_its_own_folder(tmp_path_factory, monkeypatch):
    """Every test runs in a fresh empty folder: a command that writes where it stands (``run``
    puts its report in ``./deflectbench-report``) then writes there, not into the repository,
    where tests running at once (pytest-xdist) would build and remove each other's files."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="session")
def _shared_llm_server():
    from support.servers import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(_shared_llm_server):
    """A :class:`~support.servers.FakeLLMServer` started once per test process and reset
    before each test: default settings, no requests yet; configure it with ``.reset(...)``.
    For tests whose requests all end before the test does (nothing left to reach the next)."""
    return _shared_llm_server.reset()


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


try:
    from deflectbench.models.llama_local import LlamaCppModel
except ImportError:  # pragma: no cover - the module moved; the guard below then does nothing
    LlamaCppModel = None


@pytest.fixture(autouse=True)
def _bundled_model_needs_the_llama_marker(request, monkeypatch):
    """A test that loads the bundled model in this process without ``@pytest.mark.llama`` fails
    loudly: the marker is how ``-m "not llama"`` leaves the slow model out, so it must be true."""
    if LlamaCppModel is None or request.node.get_closest_marker("llama") is not None:
        yield
        return
    loads: list[str] = []

    def refuse(self):
        loads.append(self.name)
        raise RuntimeError(f"{self.name}: this test is not marked llama")

    monkeypatch.setattr(LlamaCppModel, "_load", refuse)
    yield
    if loads:
        pytest.fail(f"loads the bundled model ({loads[0]}) without @pytest.mark.llama", False)
