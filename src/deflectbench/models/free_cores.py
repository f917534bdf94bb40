"""How many cores the other processes leave free, for the threads of an in-process model.

llama.cpp's threads spin while they wait for each other, so one thread more than the free
cores collapses (a few tokens/s instead of 60 on a busy 2-core machine) and one fewer wastes a
core. The 1-minute load average is a poor guide: it lags by a minute, and while a run
generates its own threads are the load, so a choice read from it ratchets itself down to one
thread. :class:`FreeCores` instead reads, between two moments, how busy the cores this
process may use were (``/proc/stat``) minus what this process itself used
(``/proc/self/stat``): the other processes' load, in cores, over the window. Where ``/proc`` is
missing it falls back on the load average minus this process's own threads. The readers are
injected, so the choice is tested on made-up readings.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

#: More threads than this gains a 135M model little, and each one spins.
MAX_THREADS = 4
#: A re-check over a shorter window keeps the choice (a short window is noise).
MIN_WINDOW_S = 1.0
#: The first choice's window, when nothing was read before (a short wait, once).
FIRST_WINDOW_S = 0.25


@dataclass(frozen=True)
class CpuSample:
    """Clock ticks, summed over the cores this process may use, since boot."""

    #: Every tick of those cores, busy or idle.
    total: int
    #: Their busy ticks, this process's included (user, nice, system, irq, softirq, steal).
    busy: int
    #: The ticks this process used (every thread of it).
    own: int


#: Reads a :class:`CpuSample` now; None where it cannot (no ``/proc``).
CpuReader = Callable[[], "CpuSample | None"]
#: The 1-minute load average; None where it is unknown.
LoadReader = Callable[[], "float | None"]


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity), else every core."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def read_proc(
    cores: Collection[int] | None = None,
    stat: Path = Path("/proc/stat"),
    own_stat: Path = Path("/proc/self/stat"),
) -> CpuSample | None:
    """The sample from ``/proc`` (Linux); None if it cannot be read or parsed."""
    wanted = {f"cpu{c}" for c in (usable_cores() if cores is None else cores)}
    try:
        lines = stat.read_text().splitlines()
        own_fields = own_stat.read_text().rpartition(")")[2].split()
        # utime and stime: the 14th and 15th fields, the 12th and 13th after the name
        own = int(own_fields[11]) + int(own_fields[12])
        total = busy = 0
        for line in lines:
            name, _, rest = line.partition(" ")
            if name not in wanted:
                continue
            ticks = [int(x) for x in rest.split()[:8]]
            user, nice, system, _idle, _iowait, irq, softirq, steal = ticks + [0] * (8 - len(ticks))
            total += sum(ticks)
            busy += user + nice + system + irq + softirq + steal
    except (OSError, ValueError, IndexError):
        return None
    return CpuSample(total, busy, own) if total else None


def read_load() -> float | None:
    """The 1-minute load average, None where the system has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


@dataclass(frozen=True)
class Choice:
    """A thread count and why."""

    threads: int
    cores: int
    #: The other processes' load in cores (None: unknown).
    others: float | None
    #: Where the load was read: "cpu" (``/proc``), "load average", or "" (unknown).
    source: str

    @property
    def why(self) -> str:
        """``2 threads (2 cores, other load 0.1)``: what the progress line shows."""
        s = "thread" if self.threads == 1 else "threads"
        cores = f"{self.cores} core" + ("" if self.cores == 1 else "s")
        if self.others is None:
            return f"{self.threads} {s} ({cores}, load unknown: half of them)"
        return f"{self.threads} {s} ({cores}, other load {self.others:.1f})"


def threads_for_load(cores: int, others: float | None, cap: int = MAX_THREADS) -> int:
    """One thread per core the others leave free (rounded to the nearest core), at least one,
    at most ``cap``; half the cores when the others' load is unknown."""
    if others is None:
        return max(1, min(cap, cores // 2))
    return max(1, min(cap, cores, math.floor(cores - others + 0.5)))


class FreeCores:
    """Chooses an in-process model's threads from the cores the other processes leave free;
    :meth:`check` re-reads them (between two generations) and says when the choice changes."""

    def __init__(
        self,
        cores: int | None = None,
        *,
        read_cpu: CpuReader | None = None,
        read_loadavg: LoadReader = read_load,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        cap: int = MAX_THREADS,
    ) -> None:
        self.cores = cores or len(usable_cores())
        self._read_cpu: CpuReader = read_cpu or read_proc
        self._read_load = read_loadavg
        self._clock = clock
        self._sleep = sleep
        self.cap = cap
        self.choice: Choice | None = None
        self._last: CpuSample | None = self._read_cpu()
        self._last_at = self._clock()

    @property
    def threads(self) -> int:
        return self.check().threads if self.choice is None else self.choice.threads

    def check(self) -> Choice:
        """The threads to use now. The other processes' load is read over the window since the
        last check (the first check waits :data:`FIRST_WINDOW_S` if it comes too soon); a
        window shorter than :data:`MIN_WINDOW_S` keeps the last choice."""
        now = self._clock()
        if self.choice is not None and now - self._last_at < MIN_WINDOW_S:
            return self.choice
        if self.choice is None and now - self._last_at < FIRST_WINDOW_S:
            self._sleep(FIRST_WINDOW_S - (now - self._last_at))
            now = self._clock()
        sample = self._read_cpu()
        others, source = self._others(self._last, sample)
        if sample is not None:
            self._last, self._last_at = sample, now
        self.choice = Choice(threads_for_load(self.cores, others, self.cap), self.cores, others,
                             source)  # fmt: skip
        return self.choice

    def _others(
        self, before: CpuSample | None, after: CpuSample | None
    ) -> tuple[float | None, str]:
        """The other processes' load in cores, and where it was read."""
        if before is not None and after is not None and after.total > before.total:
            ticks_per_core = (after.total - before.total) / self.cores
            others = (after.busy - before.busy) - (after.own - before.own)
            return max(0.0, others / ticks_per_core), "cpu"
        load = self._read_load()
        if load is None:
            return None, ""
        # the load average counts this process's running threads too: take them off
        running = self.choice.threads if self.choice is not None else 0
        return max(0.0, load - running), "load average"
