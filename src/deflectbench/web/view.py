"""The view page: browse every generation with its prompt, response, each judge's fields and
reasoning, the consensus, the outcome and the human labels; not blind.

Researchers read the disagreements before they trust a rate, so the list filters by model,
condition, framing, template, claim, outcome and judge disagreement (any field, or one), and
every filter lives in the page's query string: a link such as
``http://127.0.0.1:8766/?model=gpt-5.5&outcome=soft_refusal&disagree=soft_refusal&gen=812``
opens the same list and the same generation for a colleague on the same machine.

Consensus and outcomes come from the analysis (:func:`deflectbench.analysis.scored_from_frames`),
never re-derived here; a generation that is not scored shows why (``error``, a non-answer's
type, or ``unscored`` when a judge has not parsed it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import (
    generation_frame,
    judgment_frame,
    scored_from_frames,
    verdicts_from_frames,
)
from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.title import pack_title
from deflectbench.gate import ascii_natural
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, NON_ANSWERS, OUTCOMES
from deflectbench.web.pages import StoreOpener, render
from deflectbench.web.server import Response, error_response, json_response

__all__ = ["FILTERS", "NOT_SCORED", "ViewApp", "ViewIndex"]

#: Query-string filters of the list, and the column each reads (``disagree`` and ``labelled``
#: are computed).
FILTERS: dict[str, str] = {
    "model": "model",
    "condition": "condition",
    "framing": "framing",
    "template": "prompt_id",
    "claim": "claim_id",
    "outcome": "outcome",
    "disagree": "",
    "labelled": "",
}
#: What the outcome column says of a generation that has no outcome.
#: A typed non-answer is ``non_answer:<type>`` (a provider's ``refusal`` is not the outcome).
NOT_SCORED: tuple[str, ...] = ("error", *(f"non_answer:{r}" for r in NON_ANSWERS), "unscored")
PREVIEW = 160
PER_PAGE = 50


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and NA -> None, numpy numbers -> Python numbers."""
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float | np.floating):
        return (
            None
            if math.isnan(value)
            else (int(value) if float(value).is_integer() else float(value))
        )
    if isinstance(value, np.integer):
        return int(value)
    return value


@dataclass
class ViewIndex:
    """Every generation's list row, read once when the page starts, with the consensus and the
    judges' verdicts kept as frames indexed by gen_id (one generation's are read on demand)."""

    rows: pd.DataFrame
    scored: pd.DataFrame
    judgments: pd.DataFrame
    judges: list[str]
    consensus_rule: str

    @classmethod
    def build(cls, store: Store, benchmark: Benchmark, consensus: str = "mean") -> ViewIndex:
        """The rows of ``benchmark``'s generations only (a store may hold several packs)."""
        cols = ["gen_id", "model", "condition", "claim_id", "prompt_id", "sample", "error"]
        read = [*cols, "finish_reason", "response", "benchmark"]
        rows = pd.DataFrame(store.generation_rows(columns=read), columns=read)
        rows = rows[rows["benchmark"] == benchmark.key].drop(columns=["benchmark"])
        preview = rows["response"].fillna("").str.slice(0, PREVIEW)
        rows = rows.drop(columns=["response"]).assign(preview=preview)
        framing = {t.prompt_id: t.framing for t in benchmark.templates}
        rows["framing"] = rows["prompt_id"].map(framing).fillna("")

        gens = generation_frame(store)
        judg = judgment_frame(store, text=True)
        judges = sorted(judg["judge"].dropna().unique().tolist()) if len(judg) else []
        scored = (
            scored_from_frames(gens, judg, benchmark, consensus=consensus)
            if judges
            else pd.DataFrame(columns=["gen_id", *FIELDS, "outcome"])
        )
        status = np.where(
            rows["error"].notna(),
            "error",
            np.where(
                rows["finish_reason"].isin(list(NON_ANSWERS)),
                "non_answer:" + rows["finish_reason"].fillna(""),
                "unscored",
            ),
        )
        scored = scored.set_index(scored["gen_id"].astype(int))[[*FIELDS, "outcome"]]
        outcome = rows["gen_id"].astype(int).map(scored["outcome"])
        rows["outcome"] = outcome.where(outcome.notna(), pd.Series(status, index=rows.index))

        parsed = verdicts_from_frames(gens, judg, benchmark) if judges else None
        differ: dict[int, list[str]] = {}
        if parsed is not None and len(parsed):
            g = parsed.groupby("gen_id")[list(FIELDS)]
            high, low = g.max(), g.min()
            spread = (high != low) & high.notna()
            spread = spread[spread.any(axis=1)]
            names = np.array(FIELDS, dtype=object)
            for gid, flags in zip(spread.index, spread.to_numpy(), strict=True):
                differ[int(gid)] = names[flags].tolist()
        rows["disagree"] = rows["gen_id"].astype(int).map(lambda gid: differ.get(gid, []))

        keep = ["gen_id", "judge", "parse_error", "error", "consistency_flag", "reasoning", *FIELDS]
        judg = judg[[c for c in keep if c in judg.columns]]
        judg = judg.set_index(judg["gen_id"].astype(int)).sort_index(kind="stable")
        rows = rows.sort_values("gen_id", kind="stable").reset_index(drop=True)
        return cls(rows, scored, judg, judges, consensus)

    def consensus_of(self, gen_id: int) -> dict[str, Any] | None:
        """The analysis' consensus fields of one scored generation (None: not scored)."""
        if gen_id not in self.scored.index:
            return None
        row = self.scored.loc[gen_id]
        return {f: _clean(row[f]) for f in FIELDS}

    def verdicts_of(self, gen_id: int) -> list[dict[str, Any]]:
        """Each judge's verdict on one generation: fields as said, reasoning, failures."""
        if gen_id not in self.judgments.index:
            return []
        out = []
        for r in self.judgments.loc[[gen_id]].to_dict(orient="records"):
            out.append(
                {
                    "judge": r["judge"],
                    "fields": {f: _clean(r.get(f)) for f in FIELDS},
                    "reasoning": _clean(r.get("reasoning")),
                    "parse_error": bool(_clean(r.get("parse_error")) or 0),
                    "error": _clean(r.get("error")),
                    "consistency_flag": bool(_clean(r.get("consistency_flag")) or 0),
                }
            )
        return out

    # -- queries -----------------------------------------------------------------------------

    def facets(self) -> dict[str, list[str]]:
        """The values each filter can take (what the page's menus offer); computed once."""
        cached = getattr(self, "_facets", None)
        if cached is not None:
            return cached
        out = {
            name: sorted(self.rows[col].dropna().astype(str).unique().tolist())
            for name, col in FILTERS.items()
            if col
        }
        seen = set(out["outcome"])
        out["outcome"] = [o for o in (*OUTCOMES, *NOT_SCORED) if o in seen]
        out["disagree"] = ["any", *FIELDS]
        out["labelled"] = ["yes", "no"]
        self._facets = out
        return out

    def select(self, query: dict[str, str], labelled: set[int]) -> pd.DataFrame:
        """The rows the query's filters keep (empty values keep all). A name not in the results
        (a model, a claim) keeps nothing; a value outside the vocabulary (an outcome, a field,
        yes/no) is a :class:`QueryError`, so a mistyped link says so instead of showing 0 rows."""
        for name, allowed in (
            ("outcome", (*OUTCOMES, *NOT_SCORED)),
            ("disagree", ("any", *FIELDS)),
            ("labelled", ("yes", "no")),
        ):
            value = query.get(name, "")
            if value and value not in allowed:
                raise QueryError(f"{name} {value!r} is not one of: {', '.join(allowed)}")
        keep = np.ones(len(self.rows), dtype=bool)
        for name, col in FILTERS.items():
            value = query.get(name, "")
            if not value:
                continue
            if col:
                keep &= (self.rows[col].astype(str) == value).to_numpy()
            elif name == "disagree":
                want = None if value == "any" else value
                keep &= np.array(
                    [bool(d) and (want is None or want in d) for d in self.rows["disagree"]],
                    dtype=bool,
                )
            elif name == "labelled":
                has = self.rows["gen_id"].isin(list(labelled)).to_numpy()
                keep &= has if value == "yes" else ~has
        return self.rows[keep]


class QueryError(ValueError):
    """A query-string value the list cannot use (the response is a 400 naming it)."""


def _int(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name) or str(default)
    number = ascii_natural(raw)  # "²".isdigit() is true, and int("²") an error
    if number is None or not low <= number <= high:
        raise QueryError(f"{name} must be a whole number from {low} to {high}")
    return number


@dataclass
class ViewApp:
    """The view page over a :class:`ViewIndex` (labels are read live, so new ones show)."""

    open_store: StoreOpener
    benchmark: Benchmark
    index: ViewIndex

    def get(self, path: str, query: dict[str, str]) -> Response:
        try:
            if path == "/":
                return render(
                    "view.html.j2",
                    filters=list(FILTERS),
                    judges=self.index.judges,
                    consensus=self.index.consensus_rule,
                    fields=FIELDS,
                    pack=pack_title(self.benchmark),
                )
            if path == "/api/facets":
                return json_response(self.index.facets() | {"judges": self.index.judges})
            if path == "/api/generations":
                return self._list(query)
            if path == "/api/generation":
                return self._detail(query)
        except QueryError as exc:
            return error_response(400, str(exc))
        return error_response(404, "not found")

    def post(self, path: str, body: Any) -> Response:
        return error_response(405, "the view page is read-only")

    def _labelled(self) -> set[int]:
        with self.open_store() as store:
            return {lab.gen_id for lab in store.labels()}

    def _list(self, query: dict[str, str]) -> Response:
        unknown = [k for k in query if k not in (*FILTERS, "page", "per_page", "gen")]
        if unknown:
            raise QueryError(f"unknown filter {unknown[0]!r}; filters: {', '.join(FILTERS)}")
        per_page = _int(query, "per_page", PER_PAGE, 1, 500)
        labelled = self._labelled()
        rows = self.index.select(query, labelled)
        pages = max(1, math.ceil(len(rows) / per_page))
        page = _int(query, "page", 1, 1, pages)
        shown = rows.iloc[(page - 1) * per_page : page * per_page]
        return json_response(
            {
                "total": len(rows),
                "page": page,
                "pages": pages,
                "rows": [
                    {k: _clean(v) for k, v in r.items()}
                    | {"labelled": int(r["gen_id"]) in labelled}
                    for r in shown.drop(columns=["error", "finish_reason"]).to_dict(
                        orient="records"
                    )
                ],
            }
        )

    def _detail(self, query: dict[str, str]) -> Response:
        gid = _int(query, "id", 0, 1, 2**62)
        with self.open_store() as store:
            row = store.generation_row(gid)
            labels = [lab for lab in store.labels() if lab.gen_id == gid]
        if row is None or row.get("benchmark") != self.benchmark.key:
            return error_response(404, f"no generation {gid} of {pack_title(self.benchmark)}")
        listed = self.index.rows[self.index.rows["gen_id"] == gid]
        claim = next((c for c in self.benchmark.claims if c.claim_id == row["claim_id"]), None)
        template = next(
            (t for t in self.benchmark.templates if t.prompt_id == row["prompt_id"]), None
        )
        keep = (
            "gen_id", "benchmark", "model", "condition", "claim_id", "prompt_id", "sample",
            "prompt", "response", "error", "finish_reason", "input_tokens", "output_tokens",
            "latency_s", "cost_usd", "created_at", "source", "run_id",
        )  # fmt: skip
        return json_response(
            {k: _clean(row.get(k)) for k in keep}
            | {
                "claim": claim.text if claim else None,
                "level": claim.level_name if claim else None,
                "framing": template.framing if template else None,
                "fallacy_requested": template.fallacy if template else None,
                "outcome": listed["outcome"].iloc[0] if len(listed) else None,
                "disagree": listed["disagree"].iloc[0] if len(listed) else [],
                "consensus": self.index.consensus_of(gid),
                "consensus_rule": self.index.consensus_rule,
                "judges": self.index.verdicts_of(gid),
                "human": [
                    {
                        "annotator": lab.annotator,
                        "values": lab.values,
                        "unsure": lab.unsure,
                        "note": lab.note,
                        "source": lab.source,
                        "updated_at": lab.updated_at,
                    }
                    for lab in labels
                ],
            }
        )
