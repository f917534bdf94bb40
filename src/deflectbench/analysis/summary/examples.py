"""Example responses: a few scored generations per model and outcome, with every judge's verdict.

Drawn with the analysis seed, so the same store and options show the same examples. Model and
judge text stays plain ``str`` here; escaping it is the job of whoever renders it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from deflectbench.analysis.tables.grouping import group_codes, model_outcome_codes, rows_of_groups
from deflectbench.benchmark import Benchmark
from deflectbench.vocab import FIELDS, LEVEL_NAMES, OUTCOMES

__all__ = [
    "EXAMPLES_PER_CELL",
    "MAX_RESPONSE_CHARS",
    "SNIPPET_CHARS",
    "Example",
    "JudgeVerdict",
    "Texts",
    "pick_examples",
]

#: Responses shown per model and outcome.
EXAMPLES_PER_CELL = 2
#: Characters of a response shown before the fold.
SNIPPET_CHARS = 600
#: Longest response text kept at all (the rest is cut, and the cut is said).
MAX_RESPONSE_CHARS = 20_000


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's own fields on one generation (None: not scored); ``used``: in the consensus."""

    judge: str
    used: bool
    fields: Mapping[str, int | None]
    parse_error: bool
    error: str | None
    reasoning: str


@dataclass(frozen=True)
class Example:
    """One scored generation shown in full: where it comes from, its consensus, its judges."""

    gen_id: int
    model: str
    outcome: str
    claim_id: str
    claim_text: str
    level: int
    level_name: str
    prompt_id: str
    framing: str
    fallacy_requested: str
    sample: int
    output_tokens: int
    consensus: Mapping[str, int | None]
    judges: tuple[JudgeVerdict, ...]
    snippet: str
    response: str
    n_chars: int
    folded: bool
    cut: bool


def _verdict(v: Any) -> int | None:
    """A judge's stored field: 0/1, or None for missing (NULL, NaN, the release's -1)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or int(v) < 0:
        return None
    return int(v)


def _cell(v: Any) -> int | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return int(v)


class Texts(Protocol):
    """Where the shown texts are read, by generation (:class:`..frames.load.StoreTexts`)."""

    def responses(self, gen_ids: Sequence[int]) -> Mapping[int, str | None]: ...

    def reasonings(self, gen_ids: Sequence[int]) -> Mapping[tuple[int, str], str | None]: ...


def _judge_verdicts(
    judg: pd.DataFrame,
    gen_ids: Sequence[int],
    judges: Sequence[str],
    reasonings: Mapping[tuple[int, str], str | None],
) -> dict[int, list[JudgeVerdict]]:
    """Every judge's own fields on the given generations."""
    shown = [c for c in ("gen_id", "judge", "parse_error", "error", *FIELDS) if c in judg]
    rows = np.flatnonzero(judg["gen_id"].isin(list(gen_ids)).to_numpy())
    records = _records(judg, rows, shown)
    if records is not None and all(type(r["judge"]) is str for r in records):
        records.sort(key=lambda r: (r["gen_id"], r["judge"]))  # stable, as sort_values
    else:  # a judge that is no text (missing) is sorted last by pandas
        mine = judg.iloc[rows][shown]
        records = mine.sort_values(["gen_id", "judge"]).to_dict(orient="records")
    out: dict[int, list[JudgeVerdict]] = {}
    for r in records:
        out.setdefault(int(r["gen_id"]), []).append(
            JudgeVerdict(
                judge=str(r["judge"]),
                used=r["judge"] in judges,
                fields={f: _verdict(r.get(f)) for f in FIELDS},
                parse_error=bool(r.get("parse_error") or 0),
                error=r.get("error"),
                reasoning=reasonings.get((int(r["gen_id"]), str(r["judge"]))) or "",
            )
        )
    return out


def _records(
    frame: pd.DataFrame, rows: np.ndarray, columns: Sequence[str]
) -> list[dict[str, Any]] | None:
    """``frame.take(rows)[columns].to_dict(orient="records")``, the same dicts of the same
    Python values, read column by column: numpy columns and pandas' ``str`` ones (their values
    already the Python ones ``to_dict`` gives), ``object`` ones of texts and None (which
    ``to_dict`` leaves as they are). None for any other column: ask ``to_dict``."""
    if not frame.columns.is_unique:
        return None
    values = []
    for c in columns:
        col = frame[c]
        kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else None
        texts = isinstance(col.dtype, pd.StringDtype) and isinstance(col.dtype.na_value, float)
        if not (texts or (kind is not None and kind in "biufO")):
            return None
        taken = col.take(rows).tolist()
        if kind == "O" and not all(v is None or type(v) is str for v in taken):
            return None
        values.append(taken)
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


#: The scored table's columns an example shows (besides the fields).
_SHOWN = ("gen_id", "model", "outcome", "claim_id", "prompt_id", "sample", "output_tokens")


def _cells(scored: pd.DataFrame) -> list[np.ndarray]:
    """The rows of each (model, outcome) cell, cells in a groupby's order (models, then
    outcomes, each sorted by name), each cell's rows in the table's order. From the models'
    and outcomes' codes the tables share (:func:`model_outcome_codes`), else (a row with no
    model or an outcome off the ladder) from the two columns' own groups."""
    outcome = scored["outcome"].dtype  # names sorted as text (a category has its own order)
    by_text = isinstance(outcome, pd.StringDtype) or (
        isinstance(outcome, np.dtype) and outcome.kind == "O"
    )
    coded = model_outcome_codes(scored) if by_text else None
    if coded is None:
        cells, labels = group_codes(scored, ["model", "outcome"])
        return rows_of_groups(cells, len(labels))
    models, names, ladder = coded
    by_name = np.empty(len(OUTCOMES), dtype=np.intp)  # a ladder index -> its name's rank
    by_name[sorted(range(len(OUTCOMES)), key=OUTCOMES.__getitem__)] = np.arange(len(OUTCOMES))
    combined = models * len(OUTCOMES) + by_name[ladder]
    n_cells = len(names) * len(OUTCOMES)
    present = np.flatnonzero(np.bincount(combined, minlength=n_cells))
    number = np.full(n_cells, -1, dtype=np.intp)
    number[present] = np.arange(len(present))
    return rows_of_groups(number[combined], len(present))


def pick_examples(
    scored: pd.DataFrame,
    texts: Texts | None,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    judges: Sequence[str],
    seed: int,
    per_cell: int = EXAMPLES_PER_CELL,
) -> tuple[Example, ...]:
    """Up to ``per_cell`` responses per model and outcome, drawn with ``seed``.

    ``texts`` reads the picked generations' responses and their judges' reasonings (only
    those: nothing is read for the rest); ``judg`` holds every judgment. Ordered by model, then
    outcome in the ladder's order.
    """
    if scored.empty or texts is None:
        return ()
    rng = np.random.default_rng(seed)
    taken: list[int] = []
    for rows in _cells(scored):  # each cell's rows in the table's order
        k = min(per_cell, len(rows))
        taken.extend(rows[np.sort(rng.choice(len(rows), size=k, replace=False))].tolist())
    columns = [*_SHOWN, *FIELDS]  # the picked rows' values (these only)
    picked = _records(scored, np.asarray(taken, dtype=np.intp), columns)
    if picked is None:
        picked = scored.take(taken)[columns].to_dict(orient="records")
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    picked.sort(key=lambda r: (r["model"], rank.get(r["outcome"], 9)))
    ids = [int(r["gen_id"]) for r in picked]
    responses = texts.responses(ids)
    verdicts = _judge_verdicts(judg, ids, judges, texts.reasonings(ids))
    out = []
    for r in picked:
        gid = int(r["gen_id"])
        response = str(responses.get(gid) or "")
        claim = benchmark.claim(r["claim_id"])
        template = benchmark.template(r["prompt_id"])
        out.append(
            Example(
                gen_id=gid,
                model=str(r["model"]),
                outcome=str(r["outcome"]),
                claim_id=claim.claim_id,
                claim_text=claim.text,
                level=claim.level,
                level_name=LEVEL_NAMES.get(claim.level, claim.level_name),
                prompt_id=template.prompt_id,
                framing=template.framing,
                fallacy_requested=template.fallacy,
                sample=int(r["sample"]),
                output_tokens=int(r["output_tokens"] or 0),
                consensus={f: _cell(r[f]) for f in FIELDS},
                judges=tuple(verdicts.get(gid, [])),
                snippet=response[:SNIPPET_CHARS],
                response=response[:MAX_RESPONSE_CHARS],
                n_chars=len(response),
                folded=len(response) > SNIPPET_CHARS,
                cut=len(response) > MAX_RESPONSE_CHARS,
            )
        )
    return tuple(out)
