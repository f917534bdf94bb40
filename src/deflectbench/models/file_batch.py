"""Batch files: OpenAI batch JSONL handed to the user's own engine, and its output read back.

vLLM's offline batch runner (``python -m vllm.entrypoints.openai.run_batch``) and any OpenAI-batch
style runner read the file the OpenAI Batch API takes and write the file it gives. This is a
:class:`~deflectbench.models.batch_api.BatchAPI` whose "submit" appends the lines to a local
file and whose results are a local file, so a run's batch machinery (the store before the
file, one custom id per cell, typed non-answers, errors, exactly once) serves it unchanged.
The lines are :class:`~deflectbench.models.openai_batch.OpenAIBatches`' own: the body the
online request would send.

The engine's output is read here line by line (:func:`read_file_lines`), each line hostile
input: bounded in size and depth, every field type-checked, and each unreadable line one
counted :class:`Unreadable`, never an exception. vLLM's two error shapes keep their message:
``error`` a string (a request it could not run) or its ``ErrorResponse`` object (``{"object":
"error", "message": ...}``, or ``{"error": {"message": ...}}`` in newer versions), and a
``response`` whose ``status_code`` is not 200 with such an object as its ``body``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.models.base import Completion, GenerationParams, Message, Model, ModelError
from deflectbench.models.batch_api import (
    CANCELED,
    ERRORED,
    EXPIRED,
    SUCCEEDED,
    Limits,
    Lines,
    Outcome,
    Remote,
)
from deflectbench.secrets import scrub

if TYPE_CHECKING:
    from deflectbench.models.openai_compat import OpenAICompatModel

#: The wire batch files are stored under (their rows say where their lines went).
FILE_WIRE = "file"
#: One file is one batch: no request or byte limit of an API applies.
FILE_LIMITS = Limits(max_requests=10**9, max_bytes=2**62)
#: The most a results file may hold (a line per cell; a full paper run is tens of MB).
MAX_RESULTS_BYTES = 4 * 1024**3
#: The longest line read (a reply of tens of thousands of tokens is well under 1 MB); a longer
#: one is skipped, unread, as one unreadable line.
MAX_LINE_BYTES = 16 * 1024**2
#: The deepest JSON a line may nest (an output line nests 5 or 6 levels).
MAX_DEPTH = 32
#: The longest engine error message kept (characters).
MAX_MESSAGE_CHARS = 1000
#: What a file's error lines are: OpenAI's error codes for a batch that ended early.
_ERROR_KINDS = {"batch_expired": EXPIRED, "batch_cancelled": CANCELED}


class FileBatches:
    """Batches as files: lines appended to ``out`` (run), outcomes read from ``results``
    (import) for the batches in ``ended``; every other batch stays open, written."""

    wire = FILE_WIRE

    def __init__(
        self,
        model: OpenAICompatModel,
        *,
        out: Path | None = None,
        results: Path | None = None,
        ended: frozenset[str] = frozenset(),
        assigned: Mapping[str, Sequence[FileLine]] | None = None,
    ) -> None:
        from deflectbench.models.openai_batch import OpenAIBatches

        self.lines_of = OpenAIBatches(model)
        self.limits = FILE_LIMITS
        self.out = out
        self.results_path = results
        self.ended = ended
        #: Batch id -> the output lines the import matched to its cells.
        self.assigned = dict(assigned or {})
        #: The model id the lines carry (what a reply's ``model`` is checked against).
        self.served_id = model.api_model

    def body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The body a line carries (the online request's)."""
        return self.lines_of.body(messages, params)

    def encode(
        self, custom_id: str, messages: Sequence[Message], params: GenerationParams
    ) -> bytes:
        return self.lines_of.encode(custom_id, messages, params)

    def lines(self) -> Lines:
        return Lines()

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]:
        if self.out is None:
            raise ModelError(f"batch {tag}: no batch file to write to", status=400)
        try:
            with self.out.open("ab") as fh:
                for chunk in lines.chunks():
                    fh.write(chunk)
        except OSError as exc:
            raise ModelError(
                f"{self.out}: cannot write ({exc.strerror or exc})", status=400
            ) from None
        return Remote(id=f"file-{tag}", status="written", ended=False), str(self.out)

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        """A batch stored but maybe not written (the process died between): taken as written;
        its lines missing from the engine's output end as missing results."""
        return Remote(id=f"file-{tag}", status="written", ended=False)

    async def retrieve(self, remote_id: str) -> Remote:
        if remote_id in self.ended and self.results_path is not None:
            return Remote(
                id=remote_id, status="completed", ended=True, refs=(str(self.results_path),)
            )
        return Remote(id=remote_id, status="written", ended=False)

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        """The lines the import assigned to this batch (``assigned``), as outcomes: a reply
        read as the model reads its own, an error with the engine's message."""
        return [self.outcome(line) for line in self.assigned.get(remote.id, ())], 0

    def outcome(self, line: FileLine) -> Outcome:
        """A read line's outcome; a reply body the model cannot read is that cell's error."""
        if line.kind != SUCCEEDED or line.body is None:
            return Outcome(line.custom_id, line.kind, error=line.error)
        try:  # a hostile body through the SDK's reader: any failure is that cell's error
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pydantic's serializer warnings on odd types
                return self.lines_of._answered(line.custom_id, line.body)
        except Exception as exc:
            return Outcome(line.custom_id, ERRORED, error=_bounded(f"bad response: {exc}"))

    async def cancel(self, remote_id: str) -> Remote:
        return Remote(id=remote_id, status="cancelled", ended=True)


@dataclass(frozen=True)
class FileLine:
    """One readable line of an engine's output: its cell's custom id, what it is (an answer,
    or why there is none, with the engine's message, scrubbed and bounded), the reply body,
    and the model the body names (None: it names none, as error lines do)."""

    number: int
    custom_id: str
    kind: str
    body: dict[str, Any] | None = None
    error: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Unreadable:
    """A line that is no output line (not JSON, too long, too deep, mistyped): skipped."""

    number: int
    why: str


def read_file_lines(path: Path) -> Iterator[FileLine | Unreadable]:
    """Each non-blank line of an engine's output file, read or said unreadable; the file is
    read line by line (a line over :data:`MAX_LINE_BYTES` is skipped unread). A missing,
    unreadable or oversized file is one :class:`ModelError`."""
    try:
        if path.stat().st_size > MAX_RESULTS_BYTES:
            raise ModelError(f"{path}: larger than {MAX_RESULTS_BYTES:,} bytes", status=400)
        fh = path.open("rb")
    except OSError as exc:
        raise ModelError(f"{path}: cannot read ({exc.strerror or exc})", status=400) from None
    names: dict[str, str] = {}  # each model id scrubbed once (a file names one or two)
    with fh:
        number = 0
        while True:
            try:
                raw = fh.readline(MAX_LINE_BYTES + 1)
            except OSError as exc:
                raise ModelError(
                    f"{path}: cannot read ({exc.strerror or exc})", status=400
                ) from None
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                while raw and not raw.endswith(b"\n"):  # the rest of the long line, unread
                    raw = fh.readline(MAX_LINE_BYTES)
                yield Unreadable(number, f"longer than {MAX_LINE_BYTES:,} bytes")
                continue
            if raw.strip():
                yield read_line(number, raw, names)


def read_line(
    number: int, raw: bytes, names: dict[str, str] | None = None
) -> FileLine | Unreadable:
    """One output line, every field checked; never raises. ``names``: model ids scrubbed
    before (kept across a file's lines)."""
    try:
        line = json.loads(raw)
    except RecursionError:
        return Unreadable(number, "JSON nested too deeply")
    except ValueError:  # not JSON, not UTF-8, an integer too long to read
        return Unreadable(number, "not JSON")
    if not isinstance(line, dict):
        return Unreadable(number, f"a JSON {type(line).__name__}, not an object")
    if _too_deep(line):
        return Unreadable(number, f"JSON nested more than {MAX_DEPTH} deep")
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id or len(custom_id) > 200:
        return Unreadable(number, "no custom_id string")
    response = line.get("response")
    error = line.get("error")
    if response is not None and not isinstance(response, dict):
        return Unreadable(number, "its response is not an object")
    if not response and error in (None, "", {}, []):
        return Unreadable(number, "neither a response nor an error")
    response = response or {}
    status = response.get("status_code", 200 if response.get("body") is not None else None)
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        return Unreadable(number, "its status_code is not a number")
    body = response.get("body")
    if body is not None and not isinstance(body, dict):
        return Unreadable(number, "its response body is not an object")
    model = body.get("model") if body is not None else None
    model = _model_id(model, {} if names is None else names)
    if error not in (None, "", {}, []):  # vLLM: a message, or its ErrorResponse
        code = error.get("code") if isinstance(error, dict) else None
        kind = _ERROR_KINDS.get(code, ERRORED) if isinstance(code, str) else ERRORED
        head = f"HTTP {status}" if status not in (None, 200) else code
        return FileLine(number, custom_id, kind, error=_said(head, error), model=model)
    if body is None:
        return FileLine(number, custom_id, ERRORED, error=_said(f"HTTP {status}", None))
    if status != 200 or body.get("object") == "error" or "choices" not in body:
        return FileLine(number, custom_id, ERRORED, error=_said(f"HTTP {status}", body))
    return FileLine(number, custom_id, SUCCEEDED, body=body, model=model)


def _model_id(value: Any, names: dict[str, str]) -> str | None:
    """The model id a reply names, scrubbed and bounded (None: it names none)."""
    if not isinstance(value, str) or not value:
        return None
    if value not in names:
        if len(names) >= 1000:
            names.clear()
        names[value] = scrub(value)[:200]
    return names[value]


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v if isinstance(x, dict | list))
    return False


def _said(head: str | None, error: Any) -> str:
    """``head: message``, the engine's message found where vLLM or OpenAI put it (a string,
    ``message``, ``error.message``), else the object as JSON; scrubbed and bounded."""
    message = _message(error)
    if head is None:
        return _bounded(message or "an error without a message")
    return _bounded(f"{head}: {message}" if message else head)


def _message(error: Any) -> str | None:
    for _ in range(3):  # a string, {"message"}, {"error": "..."} or {"error": {"message"}}
        if isinstance(error, str):
            return error
        if not isinstance(error, dict):
            break
        if isinstance(error.get("message"), str):
            return str(error["message"])
        error = error.get("error")
    if error in (None, "", {}, []):
        return None
    try:
        return json.dumps(error, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return None


def _bounded(text: str) -> str:
    text = scrub(text)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


class BatchFileModel(Model):
    """``model`` whose batch API is a file (:class:`FileBatches`); it sends nothing itself."""

    def __init__(self, model: OpenAICompatModel, api: FileBatches) -> None:
        self.inner = model
        self.api = api
        self.name = model.name
        self.limits = model.limits
        self.serve_as(model)

    def request_identity(self) -> dict[str, Any]:
        return self.inner.request_identity()

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        raise ModelError(f"{self.name}: answers through a batch file only", status=400)

    def batch_api(self) -> FileBatches:
        return self.api

    async def aclose(self) -> None:
        await self.inner.aclose()
