"""The leaderboard: every model x condition x pack of any number of stores, ranked by one rate
with its CI, and groups of rows not significantly different from each other.

Groups are a compact letter display from pairwise *paired* tests: rows of one pack share its
claims, so each pair is compared with :func:`.paired.paired_bootstrap` (the same claim draws),
the p-values are Holm-adjusted over every pair of the board, and each letter marks a maximal run
of consecutive ranks in which no pair differs (p_holm >= 0.05). Two rows sharing a letter are
not significantly different; rows with no letter in common are. Rows are ranked within their
pack (other packs have other claims: their rates are not paired).

Rows are compared on the same cells: within a pack, every ranked row is restricted to the cells
(claim x template x sample) all ranked rows hold before its rate, its CI and its pairwise tests
are computed (a run lacking the templates a model refuses most would otherwise rank on another
question); ``cells`` says how many each row was ranked on and ``dropped`` how many of its own
were left out, and the leaderboard's notes say so in one line per pack. Ranked rows sharing no
cell are refused. A row left unranked keeps its own cells.

Judges must match: the board's judges are those of most rows (the first such set in row order
on a tie), and a row judged by others is marked (``judges_match`` False) and left unranked,
unless ``allow_judge_change`` ranks it with the others (still marked). "Others" are other
judge names, or the same judges with another recorded manifest (another served model id or
other parameters sent: :func:`.manifest.judge_mismatch`); such a row's ``judges`` says so.
"""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from deflectbench.analysis.compare.coverage import cell_keys
from deflectbench.analysis.compare.holm import holm
from deflectbench.analysis.compare.manifest import judge_identity, judge_mismatch
from deflectbench.analysis.compare.paired import paired_bootstrap
from deflectbench.analysis.compare.select import CompareError, Side
from deflectbench.analysis.stats.bootstrap import block_bootstrap_many
from deflectbench.errors import did_you_mean
from deflectbench.vocab import FIELDS, OUTCOMES

__all__ = [
    "ALPHA",
    "BOARD_COLUMNS",
    "leaderboard",
    "letters",
    "measure_values",
    "parse_measure",
]

ALPHA = 0.05
BOARD_COLUMNS: tuple[str, ...] = (
    "rank",
    "group",
    "pack",
    "store",
    "model",
    "condition",
    "name",
    "measure",
    "kind",
    "rate",
    "ci_lo",
    "ci_hi",
    "n",
    "n_claims",
    "cells",
    "dropped",
    "judges",
    "judges_match",
    *(f"share_{o}" for o in OUTCOMES),
)


def parse_measure(text: str) -> tuple[str, str]:
    """``--by``: an outcome (``refusal``), a field (``compliance_clean``) or ``field:NAME``
    where the two share a name; -> (kind, measure)."""
    kind, _, name = text.rpartition(":")
    if kind not in ("", "outcome", "field"):
        name = text
        kind = ""
    if not kind:
        kind = "outcome" if name in OUTCOMES else "field" if name in FIELDS else ""
    names = OUTCOMES if kind == "outcome" else FIELDS
    if not kind or name not in names:
        raise CompareError(
            f"--by {text!r}: unknown measure{did_you_mean(name, [*OUTCOMES, *FIELDS])}; "
            f"outcomes: {', '.join(OUTCOMES)}; fields: {', '.join(FIELDS)} (field:NAME)"
        )
    return kind, name


def measure_values(scored: pd.DataFrame, kind: str, measure: str) -> np.ndarray:
    """The 0/1 (NaN: missing) column of one outcome or field."""
    if kind == "outcome":
        return (scored["outcome"].to_numpy() == measure).astype(np.float64)
    return scored[measure].to_numpy(dtype=np.float64, na_value=np.nan)


def letters(different: np.ndarray) -> list[str]:
    """A compact letter display over rows already in rank order: ``different[i, j]`` says rows
    i and j differ significantly. Each maximal run of consecutive rows with no pair differing
    gets the next letter (a run inside an earlier one gets none)."""
    n = different.shape[0]
    out = [""] * n
    last_end = -1
    k = 0
    for i in range(n):
        j = i
        while j + 1 < n and not different[i : j + 2, i : j + 2].any():
            j += 1
        if j <= last_end:
            continue
        name = _letter(k)
        k += 1
        for r in range(i, j + 1):
            out[r] += name
        last_end = j
    return out


def _signature(scored: pd.DataFrame) -> dict[str, float]:
    """The row's compliance signature: each outcome's share (``share_<outcome>``)."""
    if scored.empty:
        return {f"share_{o}": float("nan") for o in OUTCOMES}
    out = scored["outcome"].to_numpy()
    return {f"share_{o}": float((out == o).mean()) for o in OUTCOMES}


def _letter(k: int) -> str:
    alphabet = string.ascii_lowercase
    return alphabet[k] if k < len(alphabet) else f"{alphabet[k % 26]}{k // 26}"


def _judge_key(side: Side) -> str:
    """The side's judges and their recorded served ids and parameters, as one key."""
    identity = {
        j: {"served": v["served"], "sent": v["sent"]} for j, v in judge_identity(side).items()
    }
    return json.dumps([list(side.judges), identity], sort_keys=True)


def _on_common_cells(
    sides: Sequence[Side], ranked: Sequence[bool]
) -> tuple[list[pd.DataFrame], list[int]]:
    """Each side's scored table, the ranked ones of each pack restricted to the cells every
    ranked side of that pack holds; and how many of its cells each side lost."""
    scored = [s.scored for s in sides]
    dropped = [0] * len(sides)
    packs: dict[str, list[int]] = {}
    for i, s in enumerate(sides):
        if ranked[i] and len(s.scored):
            packs.setdefault(s.pack, []).append(i)
    for pack, members in packs.items():
        if len(members) < 2:
            continue
        keys = {i: cell_keys(scored[i]) for i in members}
        common = keys[members[0]].unique()
        for i in members[1:]:
            common = common.intersection(keys[i].unique())
        if len(common) == 0:
            raise CompareError(
                f"the rows of {pack} share no cell (claim x template x sample): "
                f"{', '.join(sides[i].label for i in members)}; rank them on separate boards"
            )
        for i in members:
            inside = keys[i].isin(common)
            if not inside.all():
                dropped[i] = len(keys[i].unique()) - len(common)
                scored[i] = scored[i][inside]
    return scored, dropped


def leaderboard(
    sides: Sequence[Side],
    *,
    measure: str = "refusal",
    kind: str = "outcome",
    descending: bool = True,
    allow_judge_change: bool = False,
    n_resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per side: its rate of ``measure`` with a claim-block CI, its rank within its
    pack and its letters (see the module's docstring), best first (``descending``: highest
    rate first), and its signature (``share_<outcome>``, for the board's figure)."""
    if kind not in ("outcome", "field") or (kind == "outcome" and measure not in OUTCOMES):
        raise ValueError(f"unknown {kind} {measure!r}")
    keys = [_judge_key(s) for s in sides]
    reference = sides[keys.index(Counter(keys).most_common(1)[0][0])] if sides else None
    others = [judge_mismatch(reference, s) if reference is not None else None for s in sides]
    scored, dropped = _on_common_cells(sides, [o is None or allow_judge_change for o in others])
    rows = []
    for i, s in enumerate(sides):
        other = others[i]
        judges = ", ".join(s.judges)
        if other and reference is not None and s.judges == reference.judges:
            judges += " (another judge manifest)"
        mine = scored[i]
        v = measure_values(mine, kind, measure) if len(mine) else np.zeros(0)
        claims = mine["claim_id"].to_numpy() if len(mine) else np.zeros(0, dtype=object)
        ci = block_bootstrap_many(v, claims, n_resamples=n_resamples, seed=seed)
        rows.append(
            {
                "index": i,
                "pack": s.pack,
                "store": s.store,
                "model": s.model,
                "condition": s.condition,
                "name": s.label,
                "measure": measure,
                "kind": kind,
                "rate": float(ci.rate[0]),
                "ci_lo": float(ci.lo[0]),
                "ci_hi": float(ci.hi[0]),
                "n": int((~np.isnan(v)).sum()),
                "n_claims": int(pd.unique(claims).size),
                "cells": len(cell_keys(mine).unique()),
                "dropped": dropped[i],
                "judges": judges,
                "judges_match": other is None,
                **_signature(mine),
            }
        )
    board = pd.DataFrame(rows, columns=["index", *BOARD_COLUMNS[2:]])
    board["rank"] = pd.array([None] * len(board), dtype="Int64")
    board["group"] = ""
    ranked = board["judges_match"] | allow_judge_change
    sign = -1.0 if descending else 1.0
    order = board.assign(key=(sign * board["rate"]).fillna(np.inf)).sort_values(
        ["pack", "key", "name"], kind="stable"
    )
    pairs: list[tuple[int, int]] = []
    per_pack: dict[str, list[int]] = {}
    for idx in order.index:
        if ranked[idx] and not np.isnan(board.at[idx, "rate"]):
            per_pack.setdefault(board.at[idx, "pack"], []).append(idx)
    for members in per_pack.values():
        for rank, idx in enumerate(members, start=1):
            board.at[idx, "rank"] = rank
        pairs += list(combinations(members, 2))
    p = []
    for i, j in pairs:
        a, b = scored[i], scored[j]
        res = paired_bootstrap(
            measure_values(a, kind, measure),
            a["claim_id"].to_numpy(),
            measure_values(b, kind, measure),
            b["claim_id"].to_numpy(),
            n_resamples=n_resamples,
            seed=seed,
        )
        p.append(float(res.p[0]))
    adjusted = holm(p) if p else np.zeros(0)
    differ = {pair: bool(q < ALPHA) for pair, q in zip(pairs, adjusted, strict=True)}
    for members in per_pack.values():
        n = len(members)
        matrix = np.zeros((n, n), dtype=bool)
        for x, y in combinations(range(n), 2):
            matrix[x, y] = matrix[y, x] = differ[(members[x], members[y])]
        for idx, group in zip(members, letters(matrix), strict=True):
            board.at[idx, "group"] = group
    unranked = board["rank"].isna()
    board = board.assign(_unranked=unranked, _order=order.index.get_indexer(board.index))
    board = board.sort_values(["pack", "_unranked", "rank", "_order"], kind="stable")
    return board[list(BOARD_COLUMNS)].reset_index(drop=True)
