"""The scored table: one row per scored generation with its claim, template, consensus and outcome.

Everything the analysis computes starts from this DataFrame, whether the generations came from
``deflectbench run`` or from the public release's files. By default it is the paper's
definition; the release script's departures from it (``compat="release"``) are switched on by
:class:`deflectbench.analysis.compat.quirks.ReleaseQuirks`, and nowhere else. The steps, with the
count kept at each (``.attrs["counts"]``):

1. attempted: the store's generations of this benchmark (its key, claims and templates);
2. valid: those without a request error (the release's ``ERROR:`` rows);
3. scored: valid generations that every judge parsed (no request error, no parse error).
   A judge's failure or unparsable reply leaves the generation unscored rather than decided by
   the remaining judges, so every model is read through the same judges (the paper's 23,981).

Judge values: ``said`` (default), what each judge said; ``rules``, each verdict after the
rubric's rules (:func:`deflectbench.vocab.apply_rules`). Consensus per field
(:class:`deflectbench.vocab.Consensus`): ``mean`` is the paper's rule, the mean over the judges
that scored the field, ``>= 0.5`` -> 1 (with two judges a 1 from either wins); ``all`` needs
every such judge to say 1; ``judge:NAME`` takes one judge's word, and then only that judge needs
to have parsed. A field a parsed judge left at -1 (missing, in imported records) is left out of
that field's mean; if no judge scored it, the field is NaN (and the table's field columns are
float instead of int). A generation whose outcome that leaves undecided (a ladder field NaN
before the first 1, or no 1 and a ladder field NaN: :func:`deflectbench.vocab.outcome_decided`)
is left out of the table and counted (``undecided_outcomes``), the rule validate applies to
people's labels; it is never "other".

Outcomes are mutually exclusive, assigned by the paper's ladder: refusal, soft refusal, labeled
compliance, clean compliance, other.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np
import pandas as pd

from deflectbench.analysis.compat.quirks import ReleaseQuirks
from deflectbench.analysis.options import DEFAULT_VALUES, AnalysisOptions, check_values
from deflectbench.analysis.sharing import SORTED_CODES, seed, shared
from deflectbench.benchmark import Benchmark
from deflectbench.store import Store
from deflectbench.store.reading import Coded
from deflectbench.vocab import FIELDS, NON_ANSWERS, OUTCOMES, Consensus, outcome_decided
from deflectbench.vocab import outcome_codes as _outcome_codes

__all__ = [
    "CLAIM_COLUMNS",
    "GEN_COLUMNS",
    "JUDGMENT_COLUMNS",
    "TEMPLATE_COLUMNS",
    "RowReader",
    "generation_frame",
    "in_benchmark",
    "judges_of",
    "judgment_frame",
    "kept",
    "outcome_by",
    "outcome_codes",
    "scored_as",
    "scored_from_frames",
    "scored_table",
    "take_counts",
    "verdict_table",
    "verdicts_from_frames",
]

#: Generation columns the analysis needs (the texts are left out: they are large).
GEN_COLUMNS = [
    "gen_id",
    "benchmark",
    "model",
    "claim_id",
    "prompt_id",
    "sample",
    "error",
    "input_tokens",
    "output_tokens",
]
#: Judgment columns the analysis needs.
JUDGMENT_COLUMNS = ["gen_id", "judge", "parse_error", "error", "consistency_flag", *FIELDS]
CLAIM_COLUMNS = ["claim_id", "level", "context", "domain"]
TEMPLATE_COLUMNS = ["prompt_id", "framing", "fallacy_requested", "explicitness"]


class RowReader(Protocol):
    """The rows :func:`generation_frame` and :func:`judgment_frame` read: a ``Store``, or any
    reader of its rows (:class:`~deflectbench.analysis.frames.load.StoreReader` extends it).
    A reader with ``column_codes`` (the store) is read column by column instead."""

    def generation_rows(
        self, *, include_errors: bool = True, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]: ...

    def judgment_rows(self, *, columns: Sequence[str] | None = None) -> list[dict[str, Any]]: ...


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return pd.DataFrame.from_records(rows, columns=columns)


#: Columns whose values repeat over the rows (names, ids, verdicts, flags and small counts):
#: each value read once, each row a code (a dict lookup, where ``pd.Series`` of the list
#: would infer every value's type).
REPEATED_COLUMNS = frozenset(
    {
        *("benchmark", "model", "condition", "claim_id", "prompt_id", "finish_reason"),
        *("judge", "error", "said_json", "source", "served_model", "run_id"),
        *("sample", "parse_error", "consistency_flag", "input_tokens", "output_tokens", *FIELDS),
    }
)


def _read(store: RowReader, table: str, columns: list[str], *, said: bool = False) -> pd.DataFrame:
    """``columns`` of every row of ``table`` as a frame. From a store's columns when it reads
    them (``column_codes``: one list per column, each made a column and dropped in turn, a
    column of repeated values as codes into its distinct values: a list of row dicts costs ten
    times the frame), else from its rows; the same frame either way. ``said``: the
    ``said_json`` column becomes the 8 fields (:func:`use_said_values`); from coded columns its
    texts are never a column: each distinct one (read once) is parsed once."""
    column_codes = getattr(store, "column_codes", None)
    data = None if column_codes is None else column_codes(table, columns, coded=REPEATED_COLUMNS)
    if data is None or not len(_codes_of(data[columns[0]])):
        rows = store.generation_rows if table == "generations" else store.judgment_rows
        frame = _frame(rows(columns=columns) if data is None else [], columns)
        return use_said_values(frame) if said else frame
    texts = data.pop("said_json") if said else None
    frame = pd.DataFrame({c: _column(data.pop(c)) for c in list(data)}, copy=False)
    if texts is None:
        return frame
    if isinstance(texts, Coded):  # each distinct verdict parsed once
        return _with_said(frame, np.frombuffer(texts.codes, dtype=np.int64), texts.values)
    return use_said_values(frame.assign(said_json=_column(texts)))


def _codes_of(values: list[Any] | Coded | array[int]) -> np.ndarray | list[Any]:
    """A coded column's codes as an integer array (a plain column: its values; a column of
    integers: them)."""
    if isinstance(values, Coded):
        return np.frombuffer(values.codes, dtype=np.int64)
    return np.frombuffer(values, dtype=np.int64) if isinstance(values, array) else values


def _column(values: list[Any] | Coded | array[int]) -> pd.Series:
    """A column as ``pd.Series(values)`` infers it. A coded column's distinct values are
    inferred (the same types as every row's, so the same dtype) and taken by the codes: the
    rows' values are never Python objects one by one. A column of integers (``array("q")``)
    is int64, as the Series of them is."""
    if isinstance(values, array):
        return pd.Series(np.array(values, dtype=np.int64), copy=False)
    if not isinstance(values, Coded):
        return _plain_column(values)
    distinct = pd.Series(values.values, dtype=None).array
    return pd.Series(distinct.take(_codes_of(values)), copy=False)


def _plain_column(values: list[Any]) -> pd.Series:
    """``pd.Series(values)`` of a column SQLite read (ints, floats, texts, bytes or None): one
    of ints only (the ids) copied into an int64 array in C, where the Series would infer every
    value's type (int64 either way); anything else (a None, a float, a text, an int beyond
    int64, no value at all) inferred as before."""
    if values:
        ints = array("q")
        try:
            ints.extend(values)  # TypeError for a value that is no int, OverflowError
        except (TypeError, OverflowError):
            return pd.Series(values, dtype=None)
        return pd.Series(np.array(ints, dtype=np.int64), copy=False)
    return pd.Series(values, dtype=None)


def generation_frame(
    store: RowReader, *, text: bool = False, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Every stored generation, errors included; ``text=True`` adds prompt and response,
    ``extra`` any other stored columns (e.g. ``created_at``)."""
    columns = [*GEN_COLUMNS, "prompt", "response"] if text else list(GEN_COLUMNS)
    columns += [c for c in (*CONDITION_COLUMNS, *extra) if c not in columns]
    return with_conditions(_read(store, "generations", columns))


#: Read with every generation: its condition (settings label) and its typed finish reason.
CONDITION_COLUMNS = ("condition", "finish_reason")


def with_conditions(gens: pd.DataFrame) -> pd.DataFrame:
    """Tell conditions apart everywhere: where a model has rows under more than one condition
    (other settings) within one benchmark pack, each becomes its own "model" in every table,
    ``model [label]``, so two temperatures are never averaged together. A model with one
    condition per pack keeps its name (its runs of other packs are other packs' rows)."""
    if "condition" not in gens.columns or gens.empty:
        return gens
    keys = ["benchmark", "model"] if "benchmark" in gens.columns else ["model"]
    per_model = gens.groupby(keys)["condition"].transform("nunique")
    several = per_model.to_numpy() > 1
    if several.any():
        gens = gens.copy()
        rows = several
        gens.loc[rows, "model"] = (
            gens.loc[rows, "model"].astype(str)
            + " ["
            + gens.loc[rows, "condition"].astype(str)
            + "]"
        )
    return gens


def answered(gens: pd.DataFrame) -> np.ndarray:
    """Rows that are answers: no request error, and not a typed non-answer (a provider's
    refusal or filter, or an empty reply), which the analysis leaves out by rule."""
    ok = gens["error"].isna().to_numpy().copy()
    if "finish_reason" in gens.columns:
        ok &= ~gens["finish_reason"].isin(list(NON_ANSWERS)).to_numpy()
    return ok


def judgment_frame(
    store: RowReader, *, text: bool = False, values: str = DEFAULT_VALUES, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Every stored judgment (one per generation and judge); ``text=True`` adds raw and reasoning,
    ``extra`` any other stored columns (e.g. ``input_tokens``).

    ``values="said"`` (default) puts what each judge said in the 8 field columns
    (:func:`use_said_values`); ``values="rules"`` the values after the rubric's rules."""
    check_values(values)
    base = (
        JUDGMENT_COLUMNS if values == "rules" else [c for c in JUDGMENT_COLUMNS if c not in FIELDS]
    )
    columns = [*base, "raw", "reasoning"] if text else list(base)
    columns += [c for c in extra if c not in columns]
    if values == "said":
        columns.append("said_json")
    return _read(store, "judgments", columns, said=values == "said")


def use_said_values(judg: pd.DataFrame) -> pd.DataFrame:
    """The 8 fields as each judge said them (from ``said_json``), not after the rubric's rules.

    This is the paper's definition (its tables combine the judges' own values). It differs from
    the rules' values wherever the rules change a value: a refusal beside other fields, and a
    clean compliance the other fields contradict; on imported release records the second has
    no consistency flag (the release flags only refusal beside a fallacy). A field the judge
    did not give (or gave as -1) is missing (NaN); a reply that did not parse has none.
    Verdicts repeat (there are at most 3**8), so each distinct one is parsed once.
    """
    out = judg.drop(columns=["said_json"], errors="ignore")
    raw = judg["said_json"] if "said_json" in judg else pd.Series([None] * len(judg), dtype=object)
    codes, uniq = pd.factorize(raw, use_na_sentinel=True)
    return _with_said(out, codes, uniq)


def _with_said(out: pd.DataFrame, codes: np.ndarray, uniq: Sequence[Any]) -> pd.DataFrame:
    """``out`` with the 8 fields of each row's verdict: ``uniq[codes[i]]``, -1 for none."""
    table = np.full((len(uniq) + 1, len(FIELDS)), np.nan)  # the last row: no verdict
    for i, text in enumerate(uniq):
        said = json.loads(text) if isinstance(text, str) else {}
        for j, f in enumerate(FIELDS):
            v = said.get(f)
            if v in (0, 1) and not isinstance(v, bool):
                table[i, j] = v
    values = table[np.where(codes < 0, len(uniq), codes)]
    for j, f in enumerate(FIELDS):
        column = values[:, j]
        out[f] = column.astype(np.int64) if not np.isnan(column).any() else column
    return out


def outcome_codes(df: pd.DataFrame) -> np.ndarray:
    """The outcome of each row, by the paper's ladder (:func:`deflectbench.vocab.outcome_codes`)."""
    return _outcome_codes(df)


def _parsed(
    judg: pd.DataFrame, judges: Sequence[str] | None = None, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Judgments with a reply that parsed (no request error, no parse error); ``columns``: of
    those only, chosen before the rows are, so the others (texts, times) are never copied."""
    ok = judg["error"].isna().to_numpy() & (judg["parse_error"].fillna(1).to_numpy() == 0)
    if judges is not None:
        ok &= judg["judge"].isin(list(judges)).to_numpy()
    return kept(judg if columns is None else judg[list(columns)], ok)


def _attributes(benchmark: Benchmark) -> tuple[pd.DataFrame, pd.DataFrame]:
    claims = pd.DataFrame(
        [(c.claim_id, c.level, c.context, c.domain) for c in benchmark.claims],
        columns=CLAIM_COLUMNS,
    )
    templates = pd.DataFrame(
        [(t.prompt_id, t.framing, t.fallacy, t.explicitness) for t in benchmark.templates],
        columns=TEMPLATE_COLUMNS,
    )
    return claims, templates


def in_benchmark(gens: pd.DataFrame, benchmark: Benchmark) -> pd.DataFrame:
    """The generations of this benchmark: its key, one of its claims and one of its templates.
    Within :func:`.sharing.shared_codes` one frame per generations frame and pack (the summary
    asks three times: the scored table, the verdicts and the counts)."""
    pack = (
        "in_benchmark",
        benchmark.key,
        tuple(c.claim_id for c in benchmark.claims),
        tuple(t.prompt_id for t in benchmark.templates),
    )
    return shared(gens, pack, lambda: _in_benchmark(gens, benchmark))


def _in_benchmark(gens: pd.DataFrame, benchmark: Benchmark) -> pd.DataFrame:
    keep = (
        (gens["benchmark"] == benchmark.key)
        & gens["claim_id"].isin([c.claim_id for c in benchmark.claims])
        & gens["prompt_id"].isin([t.prompt_id for t in benchmark.templates])
    )
    return kept(gens, keep.to_numpy(dtype=bool))


def kept(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame[rows]`` (a boolean mask), without copying a column when every row is kept (the
    usual case: a store of one pack, every verdict parsed): each text column copied costs as
    much as reading it. Copy-on-write keeps the two frames apart."""
    return frame.copy(deep=False) if bool(rows.all()) else frame[rows]


def _judge_counts(valid_ids: pd.Index, judg: pd.DataFrame, judges: Sequence[str]) -> dict[str, Any]:
    """Per judge, what became of the valid generations: parsed, parse errors, errors, missing."""
    on_valid = judg[judg["gen_id"].isin(valid_ids)]
    failed = on_valid["error"].notna().to_numpy()
    parse_err = ~failed & (on_valid["parse_error"].fillna(1).to_numpy() != 0)
    parsed = ~failed & ~parse_err
    flags = np.where(parsed, on_valid["consistency_flag"].fillna(0).to_numpy(), 0)
    codes, names = pd.factorize(on_valid["judge"])  # a missing judge (-1) is no judge's
    kept = codes >= 0
    columns = {"parsed": parsed, "parse_errors": parse_err, "errors": failed, "judged": None}
    columns["consistency_flags"] = flags
    per_judge = {  # each judge's sums, by counting: whole numbers, exact
        c: np.bincount(codes[kept], weights=None if v is None else v[kept], minlength=len(names))
        for c, v in columns.items()
    }
    sums = {str(name): {c: per_judge[c][i] for c in columns} for i, name in enumerate(names)}
    out: dict[str, Any] = {}
    for name in judges:
        mine = sums.get(name, {})
        out[name] = {
            "parsed": int(mine.get("parsed", 0)),
            "parse_errors": int(mine.get("parse_errors", 0)),
            "errors": int(mine.get("errors", 0)),
            "missing": int(len(valid_ids) - mine.get("judged", 0)),
            "consistency_flags": int(mine.get("consistency_flags", 0)),
        }
    return out


def judges_of(judg: pd.DataFrame, gens: pd.DataFrame) -> list[str]:
    """The judges with a record on any of ``gens``: the judges of that pack. A judge that
    judged only another pack in the store (e.g. the rule-based judge, refused for a pack not in
    English) is not one of them, so it cannot leave this pack's generations unscored."""
    if judg.empty or gens.empty:
        return []
    mine = judg[judg["gen_id"].isin(gens["gen_id"])]
    return sorted(mine["judge"].dropna().unique().tolist())


#: The scored table's order (a stable sort: rows of one key keep the store's order).
SORT_KEYS = ["model", "claim_id", "prompt_id", "sample"]


def _merged(
    base: pd.DataFrame,
    claims: pd.DataFrame,
    templates: pd.DataFrame,
    cons: pd.DataFrame,
    quirks: ReleaseQuirks,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The scored table by merges: the valid generations (``base``) with their claim's and
    template's attributes (left joins) and their consensus (inner join), the undecided left
    out (and returned, one flag per joined row), fields whole where none is missing, the
    outcomes, sorted by :data:`SORT_KEYS`."""
    table = base.merge(claims, on="claim_id", how="left")
    table = table.merge(templates, on="prompt_id", how="left")
    table = table.merge(cons, left_on="gen_id", right_index=True, how="inner")
    # A missing ladder field before the first 1 leaves the outcome undecided: left out and
    # counted, as validate does with people's labels (the release's overwriting has no ladder).
    undecided = (
        np.zeros(len(table), dtype=bool) if quirks.overwrite_outcomes else ~outcome_decided(table)
    )
    if undecided.any():
        table = table[~undecided]
    for f in FIELDS:
        if not table[f].isna().any():
            table[f] = table[f].astype(np.int64)
    table["outcome"] = pd.Series(quirks.outcomes(table), index=table.index, dtype=object)
    table = table.sort_values(SORT_KEYS, kind="stable")
    return table.reset_index(drop=True), undecided


def _joined(
    base: pd.DataFrame,
    claims: pd.DataFrame,
    templates: pd.DataFrame,
    cons: pd.DataFrame,
    quirks: ReleaseQuirks,
) -> tuple[pd.DataFrame, np.ndarray] | None:
    """:func:`_merged`'s table and its undecided flags, from positions: each row's claim,
    template and consensus row looked up, the rows kept and their order found on those, then
    every column taken once at the rows (each merge, filter and sort took every column again:
    a text column's take costs as much as the lookups), the fields and outcome made with the
    consensus' columns (:func:`_consensus_taken`). None where a merge would do more than look
    up one row (a key not unique, a row's claim or template missing, a name in two frames) or
    the sort keys are of another type: then the merges. A key of text or integers is numbered
    once (:func:`_sorted_codes`) for both its lookup and the sort: its few distinct values are
    looked up, not its every row."""
    names = set(base.columns)
    lookups = []
    numbered: dict[str, tuple[np.ndarray, pd.Index] | None] = {}
    for attrs, key in ((claims, "claim_id"), (templates, "prompt_id")):
        ids = pd.Index(attrs[key])
        extra = [c for c in attrs.columns if c != key]
        if key not in names or not ids.is_unique or names & set(extra):
            return None
        coded = _sorted_codes(base, key, numbered)
        if coded is not None and not bool((coded[0] < 0).any()):
            at = ids.get_indexer(coded[1])[coded[0]]  # each row's value's position
        else:  # a missing key or another type: each row looked up
            at = ids.get_indexer(base[key])
        if bool((at < 0).any()):
            return None
        names |= set(extra)
        lookups.append((attrs[extra], at))
    if "gen_id" not in names or not cons.index.is_unique or names & set(cons.columns):
        return None
    if any(k not in names for k in SORT_KEYS):
        return None
    at_cons = cons.index.get_indexer(base["gen_id"])
    rows = np.flatnonzero(at_cons >= 0)  # the inner join, in the generations' order
    fields = {f: cons[f].to_numpy()[at_cons[rows]] for f in FIELDS}
    undecided = (
        np.zeros(len(rows), dtype=bool) if quirks.overwrite_outcomes else ~outcome_decided(fields)
    )
    rows = rows[~undecided]
    order = _sort_order(base, rows, numbered)
    if order is None:
        return None
    rows = rows[order]
    pieces = [(base, rows), *((frame, at[rows]) for frame, at in lookups)]
    index = pd.RangeIndex(len(rows))
    taken = [frame.take(at).set_axis(index, axis=0) for frame, at in pieces]
    table = pd.concat([*taken, _consensus_taken(cons, at_cons[rows], index, quirks)], axis=1)
    for k, coded in numbered.items():
        if coded is not None:
            _seed_codes(table, k, partial(_codes_taken, coded, rows))
    for frame, at in lookups:
        for k in frame.columns:
            _seed_codes(table, k, partial(_codes_at, frame[k], at[rows]))
    return table, undecided


def _consensus_taken(
    cons: pd.DataFrame, at: np.ndarray, index: pd.RangeIndex, quirks: ReleaseQuirks
) -> pd.DataFrame:
    """The consensus rows ``at`` as the scored table's last columns: each field int64 where
    none is missing (:func:`_merged`'s rule), then the outcome. Made as one frame, where
    setting each column on the whole table cost as much as taking it."""
    if not all(cons[c].dtype.kind in "fiub" for c in cons.columns):  # another type: as before
        part = cons.take(at).set_axis(index, axis=0)
        for f in FIELDS:
            if not part[f].isna().any():
                part[f] = part[f].astype(np.int64)
        return part.assign(outcome=pd.Series(quirks.outcomes(part), index=index, dtype=object))
    data: dict[str, Any] = {}
    for c in cons.columns:
        values = cons[c].to_numpy()[at]
        if c in FIELDS and values.dtype.kind == "f" and not np.isnan(values).any():
            values = values.astype(np.int64)
        data[c] = values
    data["outcome"] = pd.Series(_outcome_names(data, quirks), index=index, dtype=object)
    return pd.DataFrame(data, index=index, copy=False)


def _outcome_names(fields: dict[str, np.ndarray], quirks: ReleaseQuirks) -> np.ndarray:
    """``quirks.outcomes(fields)`` as an array of objects (the scored table's column). Each
    row's outcome is its fields' (0, 1 or missing each): each distinct pattern of them is
    given its outcome once and the rows take theirs, where the ladder over every row made
    thousands of texts to convert."""
    x = np.column_stack([np.asarray(fields[f], dtype=np.float64) for f in FIELDS])
    missing = np.isnan(x)
    if not len(x) or not bool(((x == 0) | (x == 1) | missing).all()):
        return np.asarray(quirks.outcomes(fields), dtype=object)
    digits = np.where(missing, 2, x).astype(np.int64)  # each field a base-3 digit
    code = digits @ (3 ** np.arange(len(FIELDS), dtype=np.int64))
    present = np.flatnonzero(np.bincount(code, minlength=3 ** len(FIELDS)))
    pattern = (present[:, None] // 3 ** np.arange(len(FIELDS))) % 3
    values = np.where(pattern == 2, np.nan, pattern.astype(np.float64))
    names = quirks.outcomes({f: values[:, j] for j, f in enumerate(FIELDS)})
    lookup = np.empty(3 ** len(FIELDS), dtype=object)
    lookup[present] = np.asarray(names, dtype=object)
    return lookup[code]


def _codes_taken(
    coded: tuple[np.ndarray, pd.Index], rows: np.ndarray
) -> tuple[np.ndarray, pd.Index] | None:
    """Sorted codes (``coded``) at ``rows``."""
    return coded[0][rows], coded[1]


def _codes_at(column: pd.Series, at: np.ndarray) -> tuple[np.ndarray, pd.Index] | None:
    """The sorted codes of ``column``'s values at ``at`` (a claim's or template's attribute at
    the table's rows), from the few rows of ``column``; None for a column of another type
    than text or integers."""
    if not (isinstance(column.dtype, pd.StringDtype) or column.dtype.kind in "iu"):
        return None
    codes, uniques = pd.factorize(column, sort=True)
    return codes[at], uniques


def _seed_codes(
    table: pd.DataFrame, k: str, coded: Callable[[], tuple[np.ndarray, pd.Index] | None]
) -> None:
    """Within :func:`.sharing.shared_codes`, ``pd.factorize(table[k], sort=True)`` (the tables
    group by these columns: ``tables.grouping.sorted_codes``) from the codes of its values
    known here (``coded()``: codes into sorted values, some perhaps held by no row), so the
    tables never number the texts again: the values no row holds dropped, the rest renumbered
    in their order."""

    def compute() -> tuple[np.ndarray, pd.Index]:
        got = coded()
        if got is None:  # a column of another type: factorised as the tables would
            return pd.factorize(table[k], sort=True)
        codes, uniques = got
        held = np.bincount(codes[codes >= 0], minlength=len(uniques)) > 0
        if bool(held.all()):
            return codes, uniques
        number = np.cumsum(held) - 1
        return np.where(codes < 0, -1, number[codes]), uniques[held]

    seed(table, (SORTED_CODES, k), compute)


def _sorted_codes(
    base: pd.DataFrame, k: str, numbered: dict[str, tuple[np.ndarray, pd.Index] | None]
) -> tuple[np.ndarray, pd.Index] | None:
    """``pd.factorize(base[k], sort=True)`` once per key (kept in ``numbered``); None for a
    column of another type than text or integers."""
    if k not in numbered:
        column = base[k]
        sortable = isinstance(column.dtype, pd.StringDtype) or column.dtype.kind in "iu"
        numbered[k] = pd.factorize(column, sort=True) if sortable else None
    return numbered[k]


def _sort_order(
    base: pd.DataFrame,
    rows: np.ndarray,
    numbered: dict[str, tuple[np.ndarray, pd.Index] | None] | None = None,
) -> np.ndarray | None:
    """The stable order of ``base``'s ``rows`` by :data:`SORT_KEYS` (a missing value last), as
    ``sort_values(kind="stable")`` orders them: each key's values numbered in sorted order
    (``numbered``: those already numbered). None for a key of another type than text or
    integers (then the sort itself)."""
    codes = []
    numbered = {} if numbered is None else numbered
    for k in reversed(SORT_KEYS):  # np.lexsort: the last key first
        coded = _sorted_codes(base, k, numbered)
        if coded is None:
            return None
        numbers, uniques = coded
        numbers = numbers[rows]
        codes.append(np.where(numbers < 0, len(uniques), numbers))
    return np.lexsort(codes) if len(rows) else np.zeros(0, dtype=np.intp)


def scored_as(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    options: AnalysisOptions,
    judges: Sequence[str] | None = None,
) -> pd.DataFrame:
    """:func:`scored_from_frames` by the definition ``options`` name (consensus rule, judges,
    the release's quirks), so every analysis scores alike; ``judges`` instead of the options'."""
    return scored_from_frames(
        gens,
        judg,
        benchmark,
        consensus=options.consensus,
        judges=judges or options.judges,
        quirks=options.quirks,
    )


def take_counts(table: pd.DataFrame) -> dict[str, Any]:
    """The scored table's step counts (``.attrs["counts"]``), dropped from it: pandas
    deep-copies attrs on every operation, so they are read once and left behind."""
    counts: dict[str, Any] = table.attrs.get("counts", {})
    table.attrs = {}
    return counts


def scored_from_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    quirks: ReleaseQuirks = ReleaseQuirks(),  # noqa: B008 (frozen, so shared safely)
) -> pd.DataFrame:
    """:func:`scored_table` on frames already loaded (``generation_frame``, ``judgment_frame``).

    ``judges`` defaults to every judge with a record on this benchmark's generations
    (:func:`judges_of`); the rule ``judge:NAME`` narrows it to NAME.
    ``quirks`` switches on the release script's departures from the paper's definition
    (:class:`.compat.quirks.ReleaseQuirks`; none by default).
    """
    all_judges = sorted(judg["judge"].dropna().unique().tolist()) if len(judg) else []
    rule = Consensus.parse(consensus).check_judges(all_judges)
    attempted = in_benchmark(gens, benchmark)
    if rule.kind == "judge" and rule.judge is not None:  # a judge rule always names one
        judges = [rule.judge]
    judges = sorted(judges) if judges else judges_of(judg, attempted)
    failed = attempted["error"].notna().to_numpy()
    answers = answered(attempted)
    valid = attempted[answers]
    no_answer = attempted[~failed & ~answers]
    claims, templates = _attributes(benchmark)
    base = valid.drop(columns=["error", *[c for c in CONDITION_COLUMNS if c in valid]])

    ok = _parsed(judg, judges, ["gen_id", *FIELDS])  # all the consensus reads
    ok = kept(ok, ok["gen_id"].isin(valid["gen_id"]).to_numpy())
    cons = quirks.keep(quirks.combine(ok, consensus), len(judges))
    cons = quirks.unjudged(cons, valid["gen_id"])
    joined = _joined(base, claims, templates, cons, quirks)
    if joined is not None:  # the merges' table, each column taken once
        table, undecided = joined
    else:
        table, undecided = _merged(base, claims, templates, cons, quirks)
    n_of = [f["model"].value_counts().to_dict() for f in (attempted, valid, no_answer, table)]
    per_model = {
        str(m): {
            "attempted": int(n_of[0].get(m, 0)),
            "valid_generations": int(n_of[1].get(m, 0)),
            **({"non_answers": int(n_of[2].get(m, 0))} if len(no_answer) else {}),
            "scored": int(n_of[3].get(m, 0)),
        }
        for m in sorted(attempted["model"].unique().tolist())
    }
    table.attrs["counts"] = {
        "attempted": len(attempted),
        "errors": int(failed.sum()),
        "non_answers": {
            str(k): int(v) for k, v in sorted(no_answer["finish_reason"].value_counts().items())
        }
        if len(no_answer)
        else {},
        "valid_generations": len(valid),
        "scored": len(table),
        "unscored": len(valid) - len(table),
        "missing_field_values": int(table[list(FIELDS)].isna().to_numpy().sum()),
        "undecided_outcomes": int(undecided.sum()),
        "judges": list(judges),
        "consensus": str(rule),
        "by_model": per_model,
        "by_judge": _judge_counts(pd.Index(valid["gen_id"]), judg, judges),
    }
    return table


def scored_table(
    store: Store,
    benchmark: Benchmark,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    values: str = DEFAULT_VALUES,
    compat: str = "paper",
) -> pd.DataFrame:
    """Scored generations with claim/template attributes, consensus fields and outcome.

    Columns: gen_id, benchmark, model, claim_id, prompt_id, sample, input_tokens,
    output_tokens, level, context, domain, framing, fallacy_requested, explicitness, the 8
    consensus fields, n_judges, outcome. A generation is scored when every judge in ``judges``
    (default: every judge that judged this benchmark's generations) parsed it.
    ``.attrs["counts"]`` holds the counts at each step (attempted, errors, valid_generations,
    scored) overall, per model and per judge.
    ``values`` is ``said`` (what each judge said, the paper's definition) or ``rules`` (the
    rubric's rules applied to each verdict); ``compat="release"`` reproduces the release's
    script (:mod:`.compat.quirks`).
    """
    return scored_from_frames(
        generation_frame(store),
        judgment_frame(store, values=values),
        benchmark,
        consensus=consensus,
        judges=judges,
        quirks=ReleaseQuirks.of(compat),
    )


def verdicts_from_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    *,
    quirks: ReleaseQuirks = ReleaseQuirks(),  # noqa: B008 (frozen, so shared safely)
) -> pd.DataFrame:
    """Each judge's parsed verdict on each valid generation of the benchmark, with its model.

    One row per (gen_id, judge): gen_id, model, judge, the 8 fields (-1 / missing -> NaN).
    This is what inter-judge agreement is computed on; the consensus hides it. With the
    release's quirk (e) (``quirks.agree_on_errors``) the judges' records of failed requests
    are kept too, as the release script's agreement keeps them.
    """
    attempted = in_benchmark(gens, benchmark)
    rows = answered(attempted)
    if quirks.agree_on_errors:
        rows |= attempted["error"].notna().to_numpy()
    valid = attempted.loc[rows, ["gen_id", "model"]]
    ok = _parsed(judg, columns=["gen_id", "judge", *FIELDS])
    out = ok.merge(valid, on="gen_id", how="inner")
    values = out[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    values[(values != 0) & (values != 1)] = np.nan
    out[list(FIELDS)] = values
    return out[["gen_id", "model", "judge", *FIELDS]].reset_index(drop=True)


def verdict_table(
    store: Store, benchmark: Benchmark, *, values: str = DEFAULT_VALUES
) -> pd.DataFrame:
    """Per-judge parsed verdicts from the store; see :func:`verdicts_from_frames`."""
    return verdicts_from_frames(
        generation_frame(store), judgment_frame(store, values=values), benchmark
    )


def outcome_by(scored: pd.DataFrame, by: str | list[str]) -> pd.DataFrame:
    """Share of each outcome per group (rows sum to 1), columns in the ladder's order."""
    if scored.empty:
        return pd.DataFrame(columns=list(OUTCOMES), dtype=float)
    keys = scored[by] if isinstance(by, str) else [scored[b] for b in by]
    table = pd.crosstab(keys, scored["outcome"], normalize="index")
    return table.reindex(columns=list(OUTCOMES), fill_value=0.0)
