"""The annotation page: humans label the stored sample on the rubric's fields, blind.

Blind: an item shows only the claim and the response, under an opaque item id; never the
model, template, framing, condition, the generation's id (ids are assigned in run order, so
they hint at the model) or the judges' scores. Each change is saved at once; an annotator
resumes at the first item not yet fully labelled (an item marked unsure counts as labelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.title import pack_title
from deflectbench.gate import ascii_natural
from deflectbench.records import HumanLabel
from deflectbench.store import StoreError
from deflectbench.store.labels import LabelError, SampleItem, check_annotator
from deflectbench.vocab import FIELDS
from deflectbench.web.pages import FIELD_KEYS, KEYS, StoreOpener, render, rubric_paragraphs
from deflectbench.web.server import Response, error_response, json_response

__all__ = ["AnnotateApp", "is_complete"]


def is_complete(label: HumanLabel | None) -> bool:
    """Labelled: every field given, or marked unsure (a doubt is an answer too)."""
    return label is not None and (label.unsure or all(v is not None for v in label.values.values()))


def _label_json(label: HumanLabel | None) -> dict[str, Any] | None:
    if label is None:
        return None
    return {
        "values": label.values,
        "unsure": label.unsure,
        "note": label.note,
        "updated_at": label.updated_at,
    }


@dataclass
class AnnotateApp:
    """The annotate page over a stored sample (see :mod:`deflectbench.web.sample`)."""

    open_store: StoreOpener
    benchmark: Benchmark
    items: Sequence[SampleItem]
    annotator: str | None = None

    def __post_init__(self) -> None:
        self._by_id = {i.item_id: i for i in self.items}

    # -- routes ----------------------------------------------------------------------------

    def get(self, path: str, query: dict[str, str]) -> Response:
        if path == "/":
            return render(
                "annotate.html.j2",
                annotator=query.get("annotator") or self.annotator or "",
                total=len(self.items),
                fields=[(f, FIELD_KEYS[f]) for f in FIELDS],
                keys=KEYS,
                rubric=rubric_paragraphs(self.benchmark),
                pack=pack_title(self.benchmark),
            )
        if path == "/api/item":
            return self._item(query)
        return error_response(404, "not found")

    def post(self, path: str, body: Any) -> Response:
        if path == "/api/label":
            return self._save(body)
        return error_response(404, "not found")

    # -- the API ---------------------------------------------------------------------------

    def _labels(self, annotator: str) -> dict[int, HumanLabel]:
        with self.open_store() as store:
            return {lab.gen_id: lab for lab in store.labels(annotator)}

    def _progress(self, labels: dict[int, HumanLabel]) -> tuple[int, int]:
        """(items labelled, the position to resume at)."""
        done = [is_complete(labels.get(i.gen_id)) for i in self.items]
        resume = next((n for n, d in enumerate(done, start=1) if not d), len(self.items))
        return sum(done), resume

    def _item(self, query: dict[str, str]) -> Response:
        try:
            annotator = check_annotator(query.get("annotator", ""))
        except LabelError as exc:
            return error_response(400, str(exc))
        if not self.items:
            return error_response(404, "the annotation sample is empty")
        labels = self._labels(annotator)
        done, resume = self._progress(labels)
        raw = query.get("position") or str(resume)
        position = ascii_natural(raw)  # "²".isdigit() is true, and int("²") an error
        if position is None or not 1 <= position <= len(self.items):
            return error_response(400, f"position must be 1 to {len(self.items)}")
        item = self.items[position - 1]
        with self.open_store() as store:
            row = store.generation_row(item.gen_id) or {}
        claim_id = row.get("claim_id", "")
        claim = self.benchmark.claim(claim_id).text if self._known(claim_id) else claim_id
        return json_response(
            {
                "annotator": annotator,
                "position": position,
                "total": len(self.items),
                "done": done,
                "resume": resume,
                "item_id": item.item_id,
                "claim": claim,
                "response": row.get("response") or "",
                "label": _label_json(labels.get(item.gen_id)),
            }
        )

    def _known(self, claim_id: str) -> bool:
        return any(c.claim_id == claim_id for c in self.benchmark.claims)

    def _save(self, body: Any) -> Response:
        if not isinstance(body, dict):
            return error_response(400, "send a JSON object")
        item = self._by_id.get(str(body.get("item_id")))
        if item is None:
            return error_response(400, "unknown item_id")
        values = body.get("values") or {}
        if not isinstance(values, dict):
            return error_response(400, "values must be an object of field: 0, 1 or null")
        note = body.get("note") or ""
        unsure = body.get("unsure", False)
        if unsure not in (True, False, 0, 1, None):  # bool("false") would be True
            return error_response(400, "unsure must be true or false")
        label = HumanLabel(
            gen_id=item.gen_id,
            annotator=str(body.get("annotator", "")),
            values=values,
            unsure=bool(unsure),
            note=note if isinstance(note, str) else str(note),
        )
        try:
            with self.open_store() as store:
                store.save_label(label)
        except StoreError as exc:
            return error_response(400, str(exc))
        done, resume = self._progress(self._labels(label.annotator))
        return json_response({"saved": True, "done": done, "resume": resume})
