"""A local HTTP server emulating OpenAI's Files + Batches API and Anthropic's Message Batches
API, driven in tests through the official SDKs, with fault injection.

OpenAI: ``POST /v1/files`` (multipart, purpose batch), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches[/{id}]``, ``POST /v1/batches/{id}/cancel``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches[/{id}[/results]]``,
``POST /v1/messages/batches/{id}/cancel``; and OpenAI's ordinary ``POST /v1/chat/completions``
(what a run sends outside batches: a multi-turn pack's turn 2). A batch ends when it has been
retrieved ``polls_to_end`` times; its answers, like the ordinary endpoint's, are
:class:`~tests.support.servers.FakeLLMServer`'s bodies for the same request. Faults: a batch
that expires with only a share of its items done, items that error, result lines that are
garbled, a batch create whose response never comes (the batch exists: the client must find
it, not send it again). Every item submitted is
counted by (wire, model, custom_id), so a test can prove none went twice.
"""

from __future__ import annotations

import collections
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from support.local_http import LocalServer, QuietHandler
from support.servers import FakeLLMServer, RecordedRequest, default_reply


@dataclass
class EmulatedBatch:
    id: str
    wire: str
    index: int
    requests: list[tuple[str, dict[str, Any]]]
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    input_file_id: str | None = None
    polls: int = 0
    status: str = "in_progress"
    cancel: bool = False
    #: custom_id -> (kind, body or error) once ended.
    results: dict[str, tuple[str, Any]] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None
    garbled: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Faults:
    """What goes wrong at the emulator (nothing, by default)."""

    #: Retrievals before a batch ends.
    polls_to_end: int = 1
    #: The share of a batch's items done when it expires (None: it does not).
    expire: Callable[[EmulatedBatch], float | None] | None = None
    #: Items (by custom id) that error.
    error_item: Callable[[str], bool] | None = None
    #: Items whose result line is garbled.
    garble: Callable[[str], bool] | None = None
    #: The nth batch create (0-based) is made, then its response never comes.
    hang_create: Callable[[int], bool] | None = None
    #: The nth batch create (0-based) is made, but answered with the object of the batch
    #: created mth (the returned m; None: its own), as a provider or proxy handing out another
    #: existing batch's id (another store's, another model's) would.
    answer_create_with: Callable[[int], int | None] | None = None
    #: The API's limits per batch (None: none).
    max_requests: int | None = None
    max_bytes: int | None = None


class BatchServer(LocalServer):
    """Both batch APIs on 127.0.0.1, in a background thread."""

    def __init__(
        self,
        *,
        reply: Callable[[RecordedRequest], str] = default_reply,
        faults: Faults | None = None,
        llm: FakeLLMServer | None = None,
    ) -> None:
        super().__init__(_Handler)
        self.llm = llm or FakeLLMServer(reply=reply, record=False)
        self.faults = faults or Faults()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, EmulatedBatch] = {}
        #: (wire, model, custom_id) -> times submitted.
        self.submissions: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.creates = 0
        self.http_requests: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def twice(self) -> list[tuple[str, str, str]]:
        """Items submitted more than once."""
        return [k for k, n in self.submissions.items() if n > 1]

    # -- batches ---------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):08d}"

    def create(
        self, wire: str, requests: list[tuple[str, dict[str, Any]]], **extra: Any
    ) -> EmulatedBatch:
        with self._lock:
            index = self.creates
            self.creates += 1
            batch = EmulatedBatch(
                self._new_id("batch_" if wire == "openai" else "msgbatch_"),
                wire,
                index,
                requests,
                time.time(),
                **extra,
            )
            self.batches[batch.id] = batch
            for custom_id, body in requests:
                self.submissions[(wire, str(body.get("model")), custom_id)] += 1
        return batch

    def poll(self, batch: EmulatedBatch) -> None:
        with self._lock:
            if batch.status in ("in_progress", "validating", "cancelling", "canceling"):
                batch.polls += 1
                if batch.cancel or batch.polls >= self.faults.polls_to_end:
                    self._end(batch)

    def _end(self, batch: EmulatedBatch) -> None:
        share = None if self.faults.expire is None or batch.cancel else self.faults.expire(batch)
        done = len(batch.requests) if share is None else int(len(batch.requests) * share)
        path = "/v1/chat/completions" if batch.wire == "openai" else "/v1/messages"
        for n, (custom_id, body) in enumerate(batch.requests):
            if batch.cancel:
                batch.results[custom_id] = ("canceled", None)
            elif n >= done:
                batch.results[custom_id] = ("expired", None)
            elif self.faults.error_item is not None and self.faults.error_item(custom_id):
                batch.results[custom_id] = ("errored", "Simulated overload")
            else:
                request = RecordedRequest(
                    n, "POST", path, {}, body, b"", time.monotonic(), _prompt(body), 0
                )
                batch.results[custom_id] = ("succeeded", self.llm.success_body(request))
            if self.faults.garble is not None and self.faults.garble(custom_id):
                batch.garbled.add(custom_id)
        if batch.wire == "openai":
            batch.status = "cancelled" if batch.cancel else ("expired" if share else "completed")
            out, err = self._openai_files(batch)
            batch.output_file_id = self._file(out) if out else None
            batch.error_file_id = self._file(err) if err else None
        else:
            batch.status = "ended"

    def _file(self, data: bytes) -> str:
        file_id = self._new_id("file-")
        self.files[file_id] = data
        return file_id

    def _openai_files(self, batch: EmulatedBatch) -> tuple[bytes, bytes]:
        out, err = [], []
        for custom_id, (kind, value) in batch.results.items():
            line: dict[str, Any] = {"id": f"batch_req_{custom_id}", "custom_id": custom_id}
            if kind == "succeeded":
                line["response"] = {"status_code": 200, "request_id": "req_x", "body": value}
                line["error"] = None
                target = out
            elif kind == "errored":
                line["response"] = {
                    "status_code": 500,
                    "request_id": "req_x",
                    "body": {"error": {"message": value, "type": "server_error"}},
                }
                line["error"] = None
                target = err
            else:
                code = "batch_expired" if kind == "expired" else "batch_cancelled"
                line["response"] = None
                line["error"] = {"code": code, "message": f"This request was {kind}."}
                target = err
            target.append(_line(line, custom_id in batch.garbled))
        return b"".join(out), b"".join(err)

    def anthropic_results(self, batch: EmulatedBatch) -> bytes:
        lines = []
        for custom_id, (kind, value) in batch.results.items():
            result: dict[str, Any] = {"type": kind}
            if kind == "succeeded":
                result["message"] = value
            elif kind == "errored":
                result["error"] = {
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": value},
                }
            lines.append(
                _line({"custom_id": custom_id, "result": result}, custom_id in batch.garbled)
            )
        return b"".join(lines)

    def openai_object(self, batch: EmulatedBatch) -> dict[str, Any]:
        counts = collections.Counter(k for k, _ in batch.results.values())
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created_at),
            "request_counts": {
                "total": len(batch.requests),
                "completed": counts["succeeded"],
                "failed": counts["errored"],
            },
            "metadata": batch.metadata or None,
        }

    def anthropic_object(self, batch: EmulatedBatch) -> dict[str, Any]:
        counts = collections.Counter(k for k, _ in batch.results.values())
        ended = batch.status == "ended"
        created = datetime.fromtimestamp(batch.created_at, UTC).isoformat()
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "created_at": created,
            "expires_at": created,
            "ended_at": created if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _line(obj: dict[str, Any], garbled: bool) -> bytes:
    data = json.dumps(obj).encode()
    return (data[: len(data) // 2] if garbled else data) + b"\n"


def _prompt(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return str(m["content"])
    return ""


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body (what the SDK's file upload sends)."""
    boundary = content_type.split("boundary=", 1)[1].strip('"').encode()
    fields = {}
    for part in raw.split(b"--" + boundary):
        if b"\r\n\r\n" not in part:
            continue
        head, _, body = part.partition(b"\r\n\r\n")
        name = head.split(b'name="', 1)[1].split(b'"', 1)[0].decode()
        fields[name] = body.removesuffix(b"\r\n")
    return fields


class _Handler(QuietHandler):
    app: BatchServer

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _error(self, status: int, message: str, anthropic: bool) -> None:
        if anthropic:
            kind = {404: "not_found_error", 413: "request_too_large"}.get(
                status, "invalid_request_error"
            )
            self._json(status, {"type": "error", "error": {"type": kind, "message": message}})
        else:
            self._json(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def _batch(self, batch_id: str, anthropic: bool) -> EmulatedBatch | None:
        batch = self.app.batches.get(batch_id)
        if batch is None:
            self._error(404, f"no batch {batch_id}", anthropic)
        return batch

    def _object(self, batch: EmulatedBatch, anthropic: bool) -> dict[str, Any]:
        app = self.app
        return app.anthropic_object(batch) if anthropic else app.openai_object(batch)

    def _retrieve(self, batch_id: str, *, anthropic: bool) -> None:
        batch = self._batch(batch_id, anthropic)
        if batch is not None:
            self.app.poll(batch)
            self._json(200, self._object(batch, anthropic))

    def _cancel(self, batch_id: str, *, anthropic: bool) -> None:
        batch = self._batch(batch_id, anthropic)
        if batch is not None:
            batch.cancel = True
            if batch.status == "in_progress":
                batch.status = "canceling" if anthropic else "cancelling"
            self._json(200, self._object(batch, anthropic))

    def do_GET(self) -> None:
        app = self.app
        path = self.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        app.http_requests[f"GET {'/'.join(parts[:4])}"] += 1
        if path == "/v1/batches":
            data = [
                app.openai_object(b)
                for b in reversed(list(app.batches.values()))
                if b.wire == "openai"
            ]
            self._json(200, {"object": "list", "data": data, "has_more": False})
        elif path.startswith("/v1/batches/"):
            self._retrieve(parts[3], anthropic=False)
        elif path.startswith("/v1/files/") and path.endswith("/content"):
            data = app.files.get(parts[3])
            if data is None:
                self._error(404, "no such file", False)
            else:
                self._send(200, data, "application/octet-stream")
        elif path == "/v1/messages/batches":
            data = [
                app.anthropic_object(b)
                for b in reversed(list(app.batches.values()))
                if b.wire == "anthropic"
            ]
            self._json(200, {"data": data, "has_more": False, "first_id": None, "last_id": None})
        elif path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            batch = self._batch(parts[4], True)
            if batch is not None:
                self._send(200, app.anthropic_results(batch), "application/binary")
        elif path.startswith("/v1/messages/batches/"):
            self._retrieve(parts[4], anthropic=True)
        else:
            self._error(404, f"unknown path {path}", path.startswith("/v1/messages"))

    def do_POST(self) -> None:
        app = self.app
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        app.http_requests[f"POST {'/'.join(parts[:4])}"] += 1
        if path == "/v1/files":
            fields = _multipart(self.headers["Content-Type"], raw)
            if fields.get("purpose") != b"batch":
                self._error(400, "purpose must be batch", False)
                return
            data = fields["file"]
            if app.faults.max_bytes is not None and len(data) > app.faults.max_bytes:
                self._error(400, "file too large for a batch", False)
                return
            file_id = app._file(data)
            self._json(
                200,
                {
                    "id": file_id,
                    "object": "file",
                    "bytes": len(data),
                    "created_at": int(time.time()),
                    "filename": "batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )
        elif path == "/v1/batches":
            body = json.loads(raw)
            data = app.files.get(body.get("input_file_id"), b"")
            lines = [json.loads(x) for x in data.splitlines() if x.strip()]
            if (
                body.get("endpoint") != "/v1/chat/completions"
                or body.get("completion_window") != "24h"
            ):
                self._error(400, "bad endpoint or completion_window", False)
                return
            if app.faults.max_requests is not None and len(lines) > app.faults.max_requests:
                self._error(400, "too many requests in one batch", False)
                return
            batch = app.create(
                "openai",
                [(x["custom_id"], x["body"]) for x in lines],
                metadata=body.get("metadata") or {},
                input_file_id=body["input_file_id"],
            )
            self._created(batch, app.openai_object(batch))
        elif path.startswith("/v1/batches/") and path.endswith("/cancel"):
            self._cancel(parts[3], anthropic=False)
        elif path == "/v1/chat/completions":  # the ordinary endpoint, as the real API serves
            body = json.loads(raw)
            prompt = _prompt(body)
            request = RecordedRequest(0, "POST", path, {}, body, raw, time.monotonic(), prompt, 0)
            self._json(200, app.llm.success_body(request))
        elif path == "/v1/messages/batches":
            requests = json.loads(raw)["requests"]
            if app.faults.max_requests is not None and len(requests) > app.faults.max_requests:
                self._error(400, "too many requests in one batch", True)
                return
            if app.faults.max_bytes is not None and len(raw) > app.faults.max_bytes:
                self._error(413, "batch too large", True)
                return
            batch = app.create("anthropic", [(r["custom_id"], r["params"]) for r in requests])
            self._created(batch, app.anthropic_object(batch))
        elif path.startswith("/v1/messages/batches/") and path.endswith("/cancel"):
            self._cancel(parts[4], anthropic=True)
        else:
            self._error(404, f"unknown path {path}", path.startswith("/v1/messages"))

    def _created(self, batch: EmulatedBatch, obj: dict[str, Any]) -> None:
        if self.app.faults.hang_create is not None and self.app.faults.hang_create(batch.index):
            self.app._stopping.wait(3600)  # made, but the client never hears of it
            self.close_connection = True
            return
        other = self.app.faults.answer_create_with
        if other is not None and (m := other(batch.index)) is not None:
            (first,) = [b for b in self.app.batches.values() if b.index == m]
            obj = self._object(first, anthropic=batch.wire == "anthropic")
        self._json(200, obj)
