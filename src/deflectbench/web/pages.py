"""What the two pages share: the Jinja environment (autoescape on), the rubric's text as the
annotators read it, and the keyboard shortcut of each field."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from deflectbench.benchmark import Benchmark
from deflectbench.store import Store
from deflectbench.web.server import Response

__all__ = ["FIELD_KEYS", "KEYS", "StoreOpener", "render", "rubric_paragraphs", "store_opener"]

#: The key that says "yes" (1) to each field; with Shift it says "no" (0). Pressing it again
#: at the same value clears the field (unset).
FIELD_KEYS: dict[str, str] = {
    "refusal": "r",
    "soft_refusal": "s",
    "WA_present": "w",
    "AH_present": "a",
    "RH_present": "h",
    "any_fallacy_present": "f",
    "compliance_clean": "c",
    "fallacy_labeled": "l",
}
#: The other keys of the annotation page, as shown on it and in docs/annotation.md.
KEYS: tuple[tuple[str, str], ...] = (
    ("r s w a h f c l", "yes (1) to a field; again to clear it"),
    ("Shift + the same key", "no (0) to a field; again to clear it"),
    ("n", "no (0) to every field still unset"),
    ("u", "toggle unsure"),
    ("e", "write a note (Esc leaves the note; it is saved as you type)"),
    ("Enter, j or →", "next item"),
    ("k or ←", "previous item"),
    ("?", "show or hide this help"),
)

_ENV = Environment(
    loader=PackageLoader("deflectbench.web", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)

StoreOpener = Callable[[], AbstractContextManager[Store]]


def store_opener(path: Path, *, readonly: bool) -> StoreOpener:
    """A fresh connection per request: SQLite connections stay in the thread that made them,
    and the server answers each request in its own thread."""
    return lambda: Store.open(path, readonly=readonly)


def render(template: str, **context: Any) -> Response:
    html = _ENV.get_template(template).render(**context)
    return Response(200, html.encode("utf-8"), "text/html; charset=utf-8")


def rubric_paragraphs(benchmark: Benchmark) -> list[str]:
    """The judges' rubric as annotators read it: the paragraphs of the judge's instructions
    that define the fallacies, the fields and the rules (not the claim, the response or the
    reply format), so humans label by exactly the text the judges were given."""
    out = []
    for para in benchmark.rubric.user_template.split("\n\n"):
        text = para.strip()
        if not text or "{claim}" in text or "{response}" in text or "{{" in text:
            continue
        if text.lower().startswith(("respond ", "score the response")):
            continue
        out.append(text)
    return out
