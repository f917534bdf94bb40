"""Batch mode's part of the run's manifest: what the batch lines we write and the result lines we
read say (:mod:`deflectbench.pipeline.manifest` says how the row is read and why it is the run's
the results are stored under).

Recording only: it runs after the store has what a submit or a collect stores (never inside
those transactions), and a failure here never fails a submit or a collect: it is kept as a
note in the row (written when a later write succeeds) and the command goes on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from deflectbench import gate
from deflectbench.models.wire_log import WireLog
from deflectbench.pipeline.manifest import _keys, _scrubbed, with_batch

__all__ = ["BatchManifests"]

#: The most recording failures a row keeps as notes.
MAX_ERRORS = 5


def _key(job: Any) -> tuple[str, str, str | None]:
    """The manifest row a job's lines belong to: (role, name, condition)."""
    from deflectbench.pipeline.batches.jobs import GenerationJob

    if isinstance(job, GenerationJob):
        return ("model", job.name, job.condition)
    return ("judge", job.name, None)


def reply_ids(raw: Any) -> dict[str, str | None]:
    """A result line's served id and fingerprint as the gate keeps them (hostile input: an
    unfit one is None, not counted)."""
    raw = raw if isinstance(raw, Mapping) else {}
    return {
        "model": gate.served_id(raw.get("model")),
        "system_fingerprint": gate.served_id(raw.get("system_fingerprint")),
    }


class BatchManifests:
    """Writes a batch model's or judge's manifest row as its lines are submitted and its
    results collected. ``run_id``: the run recorded under when the context has none (the
    ``judge --batch`` command's own row); None: nothing recorded."""

    def __init__(self, store: Any, run_id: str | None) -> None:
        self.store = store
        self.run_id = run_id
        #: Why recording failed, per row, kept for the row's next write.
        self.errors: dict[tuple[Any, ...], list[str]] = {}

    def submitted(self, run_id: str | None, job: Any, log: WireLog) -> None:
        """``log``: the sent parameters and count of lines just submitted under ``run_id``."""
        now = time.time()

        def change(batch: dict[str, Any]) -> None:
            merged = WireLog()
            merged.merge_state(batch.get("log") or {})
            merged.merge_state(log.state())
            batch["log"] = merged.state()
            first = batch.get("first_submit")
            batch["first_submit"] = min(first, now) if isinstance(first, int | float) else now

        self._write(run_id, job, change)

    def collected(
        self,
        run_id: str | None,
        job: Any,
        submitted_by: str | None,
        answers: Sequence[Any],
        failed: int,
    ) -> None:
        """Results collected under ``run_id`` from a batch ``submitted_by`` a run: ``answers``
        the completions stored, ``failed`` the items without one. The submitting run's sent
        parameters are merged in once (when it is another run)."""
        now = time.time()
        log = WireLog(failed=failed)
        for c in answers:
            usage = c.usage
            log.note_reply(reply_ids(c.raw), usage.input_tokens, usage.output_tokens)
        role, name, condition = _key(job)
        own = self._target(run_id)
        source: dict[str, Any] | None = None
        if submitted_by is not None and own is not None and submitted_by != own:
            source = self._batch(submitted_by, role, name, condition)

        def change(batch: dict[str, Any]) -> None:
            merged = WireLog()
            merged.merge_state(batch.get("log") or {})
            merged.merge_state(log.state())
            origins = [r for r in batch.get("submitted_by") or [] if isinstance(r, str)]
            if source is not None and submitted_by is not None and submitted_by not in origins:
                sent = source.get("log")
                theirs: Mapping[str, Any] = sent if isinstance(sent, Mapping) else {}
                merged.merge_state(
                    {"sent": theirs.get("sent") or {}, "varied": theirs.get("varied") or {}}
                )
                origins.append(submitted_by)
                first = source.get("first_submit")
                mine = batch.get("first_submit")
                if isinstance(first, int | float):
                    batch["first_submit"] = (
                        min(mine, first) if isinstance(mine, int | float) else first
                    )
            if origins:
                batch["submitted_by"] = origins[-gate.MANIFEST_ENTRIES // 2 :]
            batch["log"] = merged.state()
            batch["last_collect"] = now

        self._write(run_id, job, change)

    # -- the row -----------------------------------------------------------------------------

    def _target(self, run_id: str | None) -> str | None:
        return run_id or self.run_id

    def _row(self, run_id: str, role: str, name: str, condition: str | None) -> dict[str, Any]:
        from deflectbench.store.manifests import manifest_rows

        for r in manifest_rows(self.store, [run_id]):
            if (r["role"], r["name"], r["condition"]) == (role, name, condition):
                return dict(r["manifest"])
        return {}

    def _batch(self, run_id: str, role: str, name: str, condition: str | None) -> dict[str, Any]:
        found = self._row(run_id, role, name, condition).get("batch")
        return dict(found) if isinstance(found, Mapping) else {}

    def _write(self, run_id: str | None, job: Any, change: Any) -> None:
        """Read the row, apply ``change`` to its batch log, write it back; never raises."""
        from deflectbench.store.manifests import put_manifests

        target = self._target(run_id)
        if target is None:
            return
        role, name, condition = _key(job)
        key = (target, role, name, condition)
        try:
            manifest = self._row(target, role, name, condition)
            model = getattr(job, "model", None)
            if not manifest:
                inner = getattr(model, "inner", model)  # a batch file's model: the one it wraps
                manifest = {"asked": getattr(inner, "api_model", None), "stopped": None}
            batch = dict(manifest.get("batch") or {})
            change(batch)
            errors = [e for e in batch.get("errors") or [] if isinstance(e, str)]
            batch["errors"] = (errors + self.errors.pop(key, []))[-MAX_ERRORS:]
            if not batch["errors"]:
                del batch["errors"]
            keys = _keys(getattr(model, "inner", model)) if model is not None else []
            manifest = _scrubbed(with_batch(manifest, batch), keys)
            put_manifests(
                self.store,
                target,
                [{"role": role, "name": name, "condition": condition, "manifest": manifest}],
            )
        except Exception as exc:  # recording only: the submit or collect goes on
            from deflectbench.secrets import scrub

            why = f"batch manifest not recorded once: {type(exc).__name__}: {scrub(str(exc))}"
            self.errors.setdefault(key, []).append(why[:300])
