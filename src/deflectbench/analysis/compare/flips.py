"""The flip table: cells (claim x template) whose majority outcome differs between two sides.

A rate can stay put while the cells under it move both ways; the flips show where. A cell's
majority outcome is its most frequent outcome over the samples, a tie going to the outcome
higher on the ladder (refusal first), so the rule never depends on row order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from deflectbench.vocab import OUTCOMES

__all__ = ["FLIP_COLUMNS", "Replies", "Texts", "flip_table", "majority_outcomes"]

FLIP_COLUMNS: tuple[str, ...] = (
    "model_a",
    "model_b",
    "claim_id",
    "prompt_id",
    "framing",
    "outcome_a",
    "outcome_b",
    "share_a",
    "share_b",
    "n_a",
    "n_b",
    "example_a",
    "example_b",
)
#: How much of a response an example keeps (model text: shown escaped, never trusted).
EXAMPLE_CHARS = 240


def majority_outcomes(scored: pd.DataFrame) -> pd.DataFrame:
    """Per (claim_id, prompt_id), in their sorted order: framing, majority outcome, its share,
    n and one gen_id with that outcome (the first by sample). Counted on integer codes (each
    column's distinct values once), not by grouping the rows' strings."""
    cols = ["claim_id", "prompt_id", "framing", "outcome", "share", "n", "gen_id"]
    if scored.empty:
        return pd.DataFrame(columns=cols)
    outcome = pd.Index(list(OUTCOMES)).get_indexer(scored["outcome"]).astype(np.int64)
    if (outcome < 0).any():
        unknown = sorted(set(scored["outcome"][outcome < 0].astype(str)))
        raise ValueError(f"not an outcome of the ladder: {', '.join(unknown)}")
    claim, claims = pd.factorize(scored["claim_id"], sort=True)
    prompt, prompts = pd.factorize(scored["prompt_id"], sort=True)
    cell = claim * len(prompts) + prompt  # cells in (claim, template) order
    k = len(OUTCOMES)
    counts = np.bincount(cell * k + outcome, minlength=len(claims) * len(prompts) * k)
    counts = counts.reshape(-1, k)
    held = np.flatnonzero(counts.sum(axis=1))
    top = counts[held].argmax(axis=1)  # the first of the most frequent: up the ladder
    n = counts[held].sum(axis=1)
    # the first row by sample of each (cell, outcome): the example
    order = np.argsort(scored["sample"].to_numpy(), kind="stable") if "sample" in scored else None
    keys = (cell * k + outcome) if order is None else (cell * k + outcome)[order]
    first_keys, first_at = np.unique(keys, return_index=True)
    rows = first_at if order is None else order[first_at]
    row = rows[np.searchsorted(first_keys, held * k + top)]
    return pd.DataFrame(
        {
            "claim_id": np.asarray(claims, dtype=object)[held // len(prompts)],
            "prompt_id": np.asarray(prompts, dtype=object)[held % len(prompts)],
            "framing": scored["framing"].to_numpy(dtype=object)[row],
            "outcome": np.asarray(OUTCOMES, dtype=object)[top],
            "share": counts[held, top] / n,
            "n": n,
            "gen_id": scored["gen_id"].to_numpy()[row],
        },
        columns=cols,
    )


class Replies(Protocol):
    """A store's responses, read only for the generations asked (the flips' examples)."""

    def of(self, gen_ids: Sequence[Any]) -> Mapping[Any, str]:
        """gen_id -> response of those of ``gen_ids`` with one (no request error)."""
        ...


#: The responses the examples are taken from: gen_id -> response, or a reader of them.
Texts = Mapping[Any, str] | Replies


def _texts(texts: Texts | None, gen_ids: pd.Series) -> Mapping[Any, str] | None:
    """The responses of ``gen_ids`` (all of ``texts`` when it is a mapping already)."""
    if texts is None or isinstance(texts, Mapping):
        return texts
    return texts.of(gen_ids.tolist())


def _example(gen_id: Any, texts: Mapping[Any, str] | None) -> Any:
    if texts is None:
        return gen_id
    text = texts.get(gen_id)
    if text is None:
        return None
    text = str(text)
    start = " ".join(text[: 4 * EXAMPLE_CHARS].split())  # a prefix of the whole, spaced alike
    if len(start) <= EXAMPLE_CHARS and len(text) > 4 * EXAMPLE_CHARS:
        start = " ".join(text.split())  # too much space in the start: all of it
    return start if len(start) <= EXAMPLE_CHARS else start[: EXAMPLE_CHARS - 3] + "..."


def flip_table(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    model_a: str,
    model_b: str,
    texts_a: Texts | None = None,
    texts_b: Texts | None = None,
) -> pd.DataFrame:
    """Cells present on both sides whose majority outcome changed, A's outcome -> B's, most
    decided first (largest shares). ``example_a``/``example_b`` are the gen_id of a generation
    with that outcome, or (``texts_*``: gen_id -> response, or a :class:`Replies` reader) the
    start of its response."""
    ma, mb = majority_outcomes(a), majority_outcomes(b)
    both = ma.merge(mb, on=["claim_id", "prompt_id"], suffixes=("_a", "_b"))
    flipped = both[both["outcome_a"] != both["outcome_b"]].copy()
    if flipped.empty:
        return pd.DataFrame(columns=list(FLIP_COLUMNS))
    flipped["framing"] = flipped["framing_a"].fillna(flipped["framing_b"])
    flipped["model_a"], flipped["model_b"] = model_a, model_b
    for side, texts in (("a", texts_a), ("b", texts_b)):
        ids = flipped[f"gen_id_{side}"]
        found = _texts(texts, ids)
        flipped[f"example_{side}"] = [_example(g, found) for g in ids]
    flipped["weight"] = flipped["share_a"] + flipped["share_b"]
    flipped = flipped.sort_values(
        ["weight", "claim_id", "prompt_id"], ascending=[False, True, True], kind="stable"
    )
    return flipped[list(FLIP_COLUMNS)].reset_index(drop=True)
