"""The monitor: refusal, soft-refusal and labeled flags for streams of model text.

The paper calls labeled compliance a low-cost monitoring signal; this is that monitor, on top
of the rule-based ``lexical`` judge (:mod:`.lexical`): each item's flags are exactly that
judge's ``refusal``, ``soft_refusal`` and ``fallacy_labeled`` fields with no claim given (a log
line has none), and its outcome is the paper's ladder over them. It is a screening signal, not
a judge: see ``docs/validity.md`` for its precision and recall against the LLM judges.

Fast, because production logs are long: every pattern is compiled once at import, and an item
is first read by a pre-filter: substring tests for the literals every refusal and soft-refusal
phrase contains (:mod:`.literals`), found through a set of the text's words, and for a
fallacy's name. An item it clears cannot raise any flag (a refusal or soft refusal needs its
phrase, a label needs a fallacy's name), so the full scan runs only on items that might; the
result is identical either way (checked in ``tests/judging/test_monitor.py``). ``workers`` > 1 spreads items over processes in chunks.

Input formats (:func:`read_items`): ``jsonl``, one JSON object per line with the text in a
named field (``text`` by default; an id field, ``id`` by default, is carried through); ``text``, items separated by
one or more blank lines. A bad JSONL line is a :class:`MonitorInputError` naming its line.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from deflectbench.judging.lexical import score
from deflectbench.judging.lexical.phrases import FAMILIES, NAME_HINTS
from deflectbench.judging.lexical.scanner import normalise
from deflectbench.judging.literals import LiteralFilter, required_literals
from deflectbench.vocab import outcome

__all__ = [
    "FLAGS",
    "FORMATS",
    "Flags",
    "Item",
    "MonitorInputError",
    "Tally",
    "flags",
    "format_of",
    "monitor",
    "monitor_items",
    "read_items",
]

#: The flags per item, in the ladder's order: the lexical judge's fields of the same names.
FLAGS: tuple[str, ...] = ("refusal", "soft_refusal", "labeled")
FORMATS: tuple[str, ...] = ("jsonl", "text")

#: Literals one of which every refusal or soft-refusal phrase contains (None: no pre-filter).
_LITERALS = required_literals([*FAMILIES["refusal"], *FAMILIES["soft"]])
_PREFILTER = LiteralFilter(_LITERALS) if _LITERALS is not None else None


class MonitorInputError(ValueError):
    """Input the monitor cannot read (a bad JSONL line, a missing text field); the message
    names the line and what to do."""


@dataclass(frozen=True, slots=True)
class Flags:
    """One item's flags and its outcome by the paper's ladder."""

    refusal: bool
    soft_refusal: bool
    labeled: bool
    outcome: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "refusal": int(self.refusal),
            "soft_refusal": int(self.soft_refusal),
            "labeled": int(self.labeled),
            "outcome": self.outcome,
        }


_CLEAR = Flags(False, False, False, "other")


def _might_flag(text: str) -> bool:
    """False only when no flag can fire: no refusal or soft-refusal phrase, no fallacy name."""
    if _PREFILTER is None:
        return True
    norm = normalise(text)
    return any(h in norm for h in NAME_HINTS) or _PREFILTER.might_match(norm)


def flags(text: str) -> Flags:
    """The lexical judge's refusal, soft-refusal and labeled flags for one text (no claim)."""
    if not _might_flag(text):
        return _CLEAR
    s = score("", text).scores
    return Flags(
        bool(s["refusal"] == 1),
        bool(s["soft_refusal"] == 1),
        bool(s["fallacy_labeled"] == 1),
        outcome(s),
    )


def _chunk_flags(texts: list[str]) -> list[Flags]:
    return [flags(t) for t in texts]


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for t in texts:
        chunk.append(t)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def monitor(texts: Iterable[str], *, workers: int = 1, chunk: int = 256) -> Iterator[Flags]:
    """Flags for each text, in order, as a stream; ``workers`` > 1 uses that many processes
    (worth it for thousands of items; each gets ``chunk`` texts at a time)."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers == 1:
        yield from map(flags, texts)
        return
    ctx = multiprocessing.get_context("spawn" if _threads_running() else "fork")
    with ctx.Pool(workers) as pool:
        for part in pool.imap(_chunk_flags, _chunks(texts, chunk)):
            yield from part


def _threads_running() -> bool:
    import threading

    return threading.active_count() > 1


# --------------------------------------------------------------------------- reading input


@dataclass(frozen=True, slots=True)
class Item:
    """One text to monitor: where it came from (``line``: its first line) and its id, if any."""

    line: int
    text: str
    id: Any = None


def _jsonl_items(lines: Iterable[str], field: str, name: str, id_field: str) -> Iterator[Item]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MonitorInputError(
                f"{name} line {number}: not valid JSON ({exc.msg}); give one JSON object per "
                "line, or --format text for plain text"
            ) from None
        if not isinstance(obj, dict):
            raise MonitorInputError(
                f"{name} line {number}: a JSON {type(obj).__name__}, not an object with a "
                f"{field!r} field"
            )
        text = obj.get(field)
        if not isinstance(text, str):
            keys = ", ".join(list(obj)[:8]) or "none"
            problem = "has no" if text is None else "has a non-text"
            raise MonitorInputError(
                f"{name} line {number}: {problem} {field!r} field (its fields: {keys}); "
                "name the text field with --field"
            )
        yield Item(number, text, obj.get(id_field))


def _text_items(lines: Iterable[str]) -> Iterator[Item]:
    block: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            yield Item(start, "".join(block).rstrip("\n"))
            block = []
    if block:
        yield Item(start, "".join(block).rstrip("\n"))


def read_items(
    stream: TextIO | Iterable[str],
    *,
    fmt: str = "jsonl",
    field: str = "text",
    name: str = "input",
    id_field: str = "id",
) -> Iterator[Item]:
    """The items of a text stream, lazily: ``jsonl`` (one object per line, text in ``field``,
    id in ``id_field``) or ``text`` (blank-line-separated blocks). ``name`` is how errors call
    the input."""
    if fmt == "jsonl":
        return _jsonl_items(stream, field, name, id_field)
    if fmt == "text":
        return _text_items(stream)
    raise MonitorInputError(f"unknown input format {fmt!r}; valid: {', '.join(FORMATS)}")


def format_of(source: str, fmt: str, lines: Iterator[str]) -> tuple[str, Iterable[str]]:
    """The format to read ``source`` (a path, ``-`` for standard input) in, and its lines.
    ``auto``: JSONL for ``.jsonl``/``.ndjson`` files, text for other files; on standard input,
    JSONL if the first non-blank line starts with ``{`` (the lines read to tell are kept)."""
    from itertools import chain
    from pathlib import Path

    if fmt != "auto":
        return fmt, lines
    if source != "-":
        return ("jsonl" if Path(source).suffix in (".jsonl", ".ndjson") else "text"), lines
    head: list[str] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first = next((h for h in head if h.strip()), "")
    return ("jsonl" if first.lstrip().startswith("{") else "text"), chain(head, lines)


def monitor_items(items: Iterable[Item], *, workers: int = 1) -> Iterator[tuple[Item, Flags]]:
    """Each item with its flags, in order, as a stream (the monitor may read ahead when it
    uses several processes, so each item waits in a queue until its flags come back)."""
    from collections import deque

    pending: deque[Item] = deque()

    def texts() -> Iterator[str]:
        for item in items:
            pending.append(item)
            yield item.text

    for found in monitor(texts(), workers=workers):
        yield pending.popleft(), found


@dataclass
class Tally:
    """How many items the monitor read and how many raised each flag."""

    items: int = 0
    refusal: int = 0
    soft_refusal: int = 0
    labeled: int = 0
    labeled_compliance: int = 0

    def add(self, found: Flags) -> None:
        self.items += 1
        self.refusal += found.refusal
        self.soft_refusal += found.soft_refusal
        self.labeled += found.labeled
        self.labeled_compliance += found.outcome == "labeled_compliance"
