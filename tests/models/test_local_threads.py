"""In-process models' threads (issue 23 item 6, issue 37 item 2): `[providers.local] threads`,
else DEFLECTBENCH_THREADS, else one per core the other processes leave free, read from /proc
over the window since the last check minus this process's own CPU (so a run's own threads do
not ratchet the choice down), re-checked between generations; the progress line says how many
threads and why, and shows tokens per second."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from deflectbench.cli.live import log_line, render, tokens_per_second
from deflectbench.errors import ConfigError
from deflectbench.models.free_cores import (
    FIRST_WINDOW_S,
    MIN_WINDOW_S,
    CpuSample,
    FreeCores,
    read_proc,
    threads_for_load,
)
from deflectbench.models.llama_local import THREADS_ENV, LlamaCppModel, local_model, threads_for

TICKS = 100  # clock ticks per second per core, as /proc counts them


class FakeProc:
    """/proc readings made up: every ``advance`` is ``seconds`` on ``cores`` cores, with the
    other processes using ``others`` cores and this process ``own`` cores."""

    def __init__(self, cores: int = 2) -> None:
        self.cores = cores
        self.sample = CpuSample(total=10_000, busy=3_000, own=50)
        self.now = 0.0

    def advance(self, seconds: float, others: float, own: float) -> None:
        s = self.sample
        busy = min(self.cores, others + own) * seconds * TICKS
        self.sample = CpuSample(
            s.total + round(self.cores * seconds * TICKS),
            s.busy + round(busy),
            s.own + round(own * seconds * TICKS),
        )
        self.now += seconds

    def cores_chooser(self, **kw) -> FreeCores:
        return FreeCores(
            self.cores, read_cpu=lambda: self.sample, clock=lambda: self.now,
            sleep=lambda s: self.advance(s, self._others_in_sleep, 0.0), **kw,
        )  # fmt: skip

    _others_in_sleep = 0.0


def test_threads_from_the_free_cores():
    assert threads_for_load(2, 0.0) == 2
    assert threads_for_load(2, 0.1) == 2  # an idle machine: every core
    assert threads_for_load(2, 0.67) == 1  # a CPU-bound process sharing with our 2 threads
    assert threads_for_load(2, 1.0) == 1  # one busy process on 2 cores leaves one free
    assert threads_for_load(2, 3.0) == 1  # at least one
    assert threads_for_load(16, 0.0) == 4  # a 135M model gains little beyond 4
    assert threads_for_load(8, 5.2) == 3
    assert threads_for_load(2, None) == 1 and threads_for_load(8, None) == 4  # unknown: half


def test_the_first_choice_waits_a_short_window_once():
    proc = FakeProc()
    proc._others_in_sleep = 1.0  # one CPU-bound process
    chooser = proc.cores_chooser()
    choice = chooser.check()
    assert proc.now == pytest.approx(FIRST_WINDOW_S)  # it waited the first window
    assert (choice.threads, choice.others, choice.source) == (1, pytest.approx(1.0), "cpu")
    assert choice.why == "1 thread (2 cores, other load 1.0)"


def test_our_own_threads_do_not_ratchet_the_choice_down():
    """A run generating with 2 threads on an idle machine is the load itself: the load average
    would read 2, the other processes' CPU reads 0, so it stays at 2."""
    proc = FakeProc()
    chooser = proc.cores_chooser()
    assert chooser.check().threads == 2
    for _ in range(5):
        proc.advance(4.0, others=0.1, own=1.9)  # a generation at full speed, 2 threads
        choice = chooser.check()
        assert choice.threads == 2, choice
    assert choice.why == "2 threads (2 cores, other load 0.1)"


def test_the_recheck_follows_the_machine_getting_busier_then_quieter():
    proc = FakeProc()
    chooser = proc.cores_chooser()
    assert chooser.check().threads == 2
    # another CPU-bound process starts: 3 runnable threads on 2 cores, it gets about 2/3
    proc.advance(4.0, others=0.67, own=1.33)
    assert chooser.check().threads == 1
    # with one thread of ours it gets its whole core: still one
    proc.advance(4.0, others=1.0, own=1.0)
    busy = chooser.check()
    assert busy.threads == 1 and busy.why == "1 thread (2 cores, other load 1.0)"
    # it ends: the next check takes both cores again
    proc.advance(4.0, others=0.0, own=1.0)
    assert chooser.check().threads == 2


def test_a_short_window_keeps_the_choice():
    proc = FakeProc()
    chooser = proc.cores_chooser()
    assert chooser.check().threads == 2
    proc.advance(MIN_WINDOW_S / 4, others=2.0, own=0.0)  # a burst too short to judge by
    assert chooser.check().threads == 2
    proc.advance(MIN_WINDOW_S, others=2.0, own=0.0)  # the window since the last reading
    assert chooser.check().threads == 1


def test_without_proc_the_load_average_less_our_own_threads():
    now = [0.0]
    loads = iter([0.2, 2.1, 3.0])
    chooser = FreeCores(
        2, read_cpu=lambda: None, read_loadavg=lambda: next(loads), clock=lambda: now[0],
        sleep=lambda s: None,
    )  # fmt: skip
    first = chooser.check()
    assert (first.threads, first.source) == (2, "load average")
    now[0] += 5
    assert chooser.check().threads == 2  # 2.1 less our 2 running threads
    now[0] += 5
    assert chooser.check().threads == 1  # 3.0 less 2: one other process
    unknown = FreeCores(2, read_cpu=lambda: None, read_loadavg=lambda: None, sleep=lambda s: None)
    assert unknown.check().why == "1 thread (2 cores, load unknown: half of them)"


def test_read_proc_parses_the_cores_we_may_use(tmp_path: Path):
    stat = tmp_path / "stat"
    stat.write_text(
        "cpu  300 10 60 900 20 0 5 5 0 0\n"
        "cpu0 100 0 20 500 10 0 2 3 0 0\n"
        "cpu1 200 10 40 400 10 0 3 2 0 0\n"
        "intr 1 2 3\n"
    )
    own = tmp_path / "self_stat"
    own.write_text("4242 (python (x) y) R 1 2 3 4 5 6 7 8 9 10 70 30 0 0 20 0 3 0\n")
    sample = read_proc([1], stat, own)
    assert sample == CpuSample(total=200 + 10 + 40 + 400 + 10 + 3 + 2, busy=200 + 10 + 40 + 3 + 2,
                               own=70 + 30)  # fmt: skip
    both = read_proc([0, 1], stat, own)
    assert both is not None and both.total == 1300
    assert read_proc([0], tmp_path / "missing", own) is None
    own.write_text("garbage")
    assert read_proc([0], stat, own) is None


def test_read_proc_on_this_machine():
    sample = read_proc()
    if sample is None:
        pytest.skip("no /proc here")
    assert sample.own >= 0 and 0 < sample.busy < sample.total


def test_threads_from_the_config_then_the_environment_then_the_free_cores():
    assert threads_for("local/smollm2", {"threads": 3}, {THREADS_ENV: "2"}) == (
        3, "set by threads in the config")  # fmt: skip
    assert threads_for("local/smollm2", None, {THREADS_ENV: "2"}) == (2, f"set by {THREADS_ENV}")
    assert threads_for("local/smollm2", None, {}) is None
    for bad in ("0", "-1", "two", "1.5", "²", "999"):
        with pytest.raises(ConfigError, match=THREADS_ENV):
            threads_for("local/smollm2", None, {THREADS_ENV: bad})
    with pytest.raises(ConfigError):
        from deflectbench.models.providers import as_config

        as_config({"threads": 0})


def test_the_bundled_model_is_built_with_them():
    pytest.importorskip("llama_cpp")
    fixed = local_model("local/smollm2", {"threads": 2}, {})
    assert fixed.n_threads == 2 and fixed.free_cores is None
    adaptive = local_model("local/smollm2", None, {})
    assert adaptive.free_cores is not None and 1 <= adaptive.n_threads <= 4


class FakeLlama:
    """What the model touches of llama-cpp-python's Llama between generations."""

    def __init__(self, n: int) -> None:
        self.n_threads = self.n_threads_batch = n
        self.ctx = object()


def test_the_recheck_changes_the_loaded_models_threads_without_reloading(monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(llama_cpp, "llama_set_n_threads", lambda ctx, n, b: calls.append((n, b)))
    proc = FakeProc()
    model = LlamaCppModel("local/smollm2", Path("x.gguf"), free_cores=proc.cores_chooser())
    llama = FakeLlama(model.n_threads)
    model._check_threads(llama)
    assert llama.n_threads == 2 and not calls
    assert model.status() == "2 threads (2 cores, other load 0.0)"
    proc.advance(3.0, others=1.0, own=1.0)
    model._check_threads(llama)
    assert calls == [(1, 1)] and llama.n_threads == 1
    assert model.status() == "1 thread (2 cores, other load 1.0)"
    proc.advance(3.0, others=0.0, own=1.0)
    model._check_threads(llama)
    assert calls == [(1, 1), (2, 2)] and llama.n_threads == 2


def test_set_threads_are_kept_and_said():
    model = LlamaCppModel("local/smollm2", Path("x.gguf"), n_threads=3,
                          threads_set_by=f"set by {THREADS_ENV}")  # fmt: skip
    llama = FakeLlama(3)
    model._check_threads(llama)
    assert model.status() == f"3 threads (set by {THREADS_ENV})" and llama.n_threads == 3


def _board(note):
    row = SimpleNamespace(role="model", name="local/smollm2", done=3, errors=0, finished=False,
                          result=SimpleNamespace(output_tokens=600), note=note)  # fmt: skip
    judge = SimpleNamespace(role="judge", name="lexical", done=3, errors=0, finished=False,
                            result=SimpleNamespace(output_tokens=0), note=None)  # fmt: skip
    board = SimpleNamespace(rows=[row, judge], elapsed=lambda: 10.0, total=lambda r: 10,
                            providers=lambda: [])  # fmt: skip
    return board, row, judge


def test_the_progress_line_shows_tokens_per_second_and_the_threads():
    board, row, judge = _board(lambda: "2 threads (2 cores, other load 0.1)")
    assert tokens_per_second(board, row) == 60.0 and tokens_per_second(board, judge) is None
    line = log_line(board)
    assert "local/smollm2 3/10 18/min 60 tok/s ETA 0:23, 2 threads (2 cores, other load 0.1);" in (
        line)  # fmt: skip
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(render(board))
    assert "local/smollm2: 2 threads (2 cores, other load 0.1)" in console.export_text()


def test_a_model_with_nothing_to_say_adds_nothing():
    board, _, _ = _board(lambda: "")
    assert "local/smollm2 3/10 18/min 60 tok/s ETA 0:23; judge lexical" in log_line(board)
