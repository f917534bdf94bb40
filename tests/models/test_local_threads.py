"""In-process models take a `threads` setting (issue 23, item 6): `[providers.local] threads`,
else DEFLECTBENCH_THREADS, else a default that leaves cores free (llama.cpp's spinning threads
collapse under contention); the progress line shows tokens per second."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from deflectbench.cli.live import log_line, tokens_per_second
from deflectbench.errors import ConfigError
from deflectbench.models.llama_local import THREADS_ENV, default_threads, local_model, threads_for


def test_threads_from_the_config_then_the_environment_then_the_default():
    assert threads_for("local/smollm2", {"threads": 3}, {THREADS_ENV: "2"}) == 3
    assert threads_for("local/smollm2", None, {THREADS_ENV: "2"}) == 2
    assert threads_for("local/smollm2", None, {}) == default_threads()
    assert 1 <= default_threads() <= 4
    for bad in ("0", "-1", "two", "1.5", "²", "999"):
        with pytest.raises(ConfigError, match=THREADS_ENV):
            threads_for("local/smollm2", None, {THREADS_ENV: bad})
    with pytest.raises(ConfigError):
        from deflectbench.models.providers import as_config

        as_config({"threads": 0})


def test_the_bundled_model_is_built_with_them():
    pytest.importorskip("llama_cpp")
    assert local_model("local/smollm2", {"threads": 2}, {}).n_threads == 2
    assert local_model("local/smollm2", None, {}).n_threads == default_threads()


def test_the_progress_line_shows_tokens_per_second():
    row = SimpleNamespace(role="model", name="local/smollm2", done=3, errors=0, finished=False,
                          result=SimpleNamespace(output_tokens=600))  # fmt: skip
    judge = SimpleNamespace(role="judge", name="lexical", done=3, errors=0, finished=False,
                            result=SimpleNamespace(output_tokens=0))  # fmt: skip
    board = SimpleNamespace(rows=[row, judge], elapsed=lambda: 10.0, total=lambda r: 10,
                            providers=lambda: [])  # fmt: skip
    assert tokens_per_second(board, row) == 60.0 and tokens_per_second(board, judge) is None
    line = log_line(board)
    assert "local/smollm2 3/10 18/min 60 tok/s ETA" in line, line
    print(line)


def test_the_default_takes_every_core_when_idle_and_half_when_busy(monkeypatch) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    assert default_threads() == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (1.7, 1.0, 0.5))
    assert default_threads() == 1

    def unknown():
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", unknown)
    assert default_threads() == 1  # unknown load counts as busy
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert default_threads() == 4  # a 135M model gains little beyond 4
