"""Judge validity: every statistic of ``analysis.validity`` checked against an independent
computation (statsmodels for kappa, hand-worked textbook values for AC1, direct counting for
accuracy, precision, recall and F1, a plain loop for the claim bootstrap, scipy's exact
binomial interval for the proportions' edges), then the store
loader, ``deflectbench validate`` and the report's section on a fixture with known labels."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.inter_rater import cohens_kappa

from deflectbench.analysis import AnalysisOptions
from deflectbench.analysis.frames.scored import scored_table, verdict_table
from deflectbench.analysis.tables.agreement import agreement_table
from deflectbench.analysis.validity.load import (
    LEXICAL,
    judge_validity,
    read_validity_inputs,
    validity_from_inputs,
)
from deflectbench.analysis.validity.measures import (
    ComparisonOptions,
    annotator_agreement,
    compare,
    human_outcome,
    human_reference,
)
from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS
from support.in_process import run_cli

# --------------------------------------------------------------------------- statistics

#: A 2x2 table worked by hand: rater vs reference on 20 items.
#:            ref 1   ref 0
#: rater 1     tp=6    fp=2
#: rater 0     fn=3    tn=9
TP, FP, FN, TN = 6, 2, 3, 9


def _items(tp=TP, fp=FP, fn=FN, tn=TN) -> tuple[np.ndarray, np.ndarray]:
    rater = np.array([1] * tp + [1] * fp + [0] * fn + [0] * tn, dtype=float)
    ref = np.array([1] * tp + [0] * fp + [1] * fn + [0] * tn, dtype=float)
    return rater, ref


def test_counts_and_rates_by_direct_counting():
    rater, ref = _items()
    c = compare(rater, ref, ["c"] * 20, n_resamples=10)
    assert (c.n, c.tp, c.fp, c.fn, c.tn) == (20, 6, 2, 3, 9)
    assert c["accuracy"].value == pytest.approx(15 / 20)
    assert c["precision"].value == pytest.approx(6 / 8)
    assert c["recall"].value == pytest.approx(6 / 9)
    p, r = 6 / 8, 6 / 9
    assert c["f1"].value == pytest.approx(2 * p * r / (p + r))
    assert c.prevalence == pytest.approx(9 / 20)


def test_kappa_matches_statsmodels():
    rater, ref = _items()
    c = compare(rater, ref, ["c"] * 20, n_resamples=10)
    # statsmodels takes the contingency table (rows: rater, columns: reference)
    assert c["kappa"].value == pytest.approx(cohens_kappa(np.array([[TP, FP], [FN, TN]])).kappa)
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
        table = np.array([[np.sum((a == i) & (b == j)) for j in (1, 0)] for i in (1, 0)])
        got = compare(a, b, np.arange(40), n_resamples=5)["kappa"].value
        assert got == pytest.approx(cohens_kappa(table).kappa)


def test_ac1_matches_a_hand_worked_value():
    # Gwet (2008): AC1 = (po - pe) / (1 - pe), pe = 2 pi (1 - pi), pi = mean prevalence of 1.
    # Here po = 15/20 = 0.75; rater says 1 on 8/20, reference on 9/20, so pi = 17/40 = 0.425
    # and pe = 2 * 0.425 * 0.575 = 0.48875; AC1 = (0.75 - 0.48875) / (1 - 0.48875)
    # = 0.26125 / 0.51125 = 0.511002...
    rater, ref = _items()
    c = compare(rater, ref, ["c"] * 20, n_resamples=10)
    assert c["ac1"].value == pytest.approx(0.26125 / 0.51125)
    assert round(c["ac1"].value, 4) == 0.5110


def test_undefined_statistics_are_nan_not_errors():
    # the rater never says 1: precision undefined; both constant on 0: kappa undefined
    c = compare(np.zeros(6), np.zeros(6), list("aabbcc"), n_resamples=20)
    assert math.isnan(c["precision"].value) and math.isnan(c["recall"].value)
    assert math.isnan(c["kappa"].value)
    assert c["ac1"].value == 1.0 and c["accuracy"].value == 1.0
    empty = compare([], [], [], n_resamples=5)
    assert empty.n == 0 and math.isnan(empty["accuracy"].value)


def test_missing_values_leave_only_that_item_out():
    rater, ref = _items()
    rater = np.append(rater, [np.nan, 1.0])
    ref = np.append(ref, [1.0, np.nan])
    c = compare(rater, ref, ["c"] * 22, n_resamples=5)
    assert c.n == 20 and (c.tp, c.fp, c.fn, c.tn) == (TP, FP, FN, TN)


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match="only 0, 1 or NaN"):
        compare([0, 2], [0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="claims has 1 entries"):
        compare([0, 1], [0, 1], ["a"])


def _boot_loop(rater, ref, claims, n_resamples, seed, metric):
    """The claim bootstrap written out plainly: draw claims, gather their items, recount."""
    labels = sorted(set(claims))
    rows = {c: [i for i, x in enumerate(claims) if x == c] for c in labels}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(labels), size=(n_resamples, len(labels)))
    values = []
    for d in draws:
        idx = [i for k in d for i in rows[labels[k]]]
        a, b = rater[idx], ref[idx]
        tp = np.sum((a == 1) & (b == 1))
        fp = np.sum((a == 1) & (b == 0))
        fn = np.sum((a == 0) & (b == 1))
        tn = np.sum((a == 0) & (b == 0))
        if metric == "recall":
            values.append(tp / (tp + fn) if tp + fn else np.nan)
        elif metric == "accuracy":
            values.append((tp + tn) / len(idx))
        elif metric == "precision":
            values.append(tp / (tp + fp) if tp + fp else np.nan)
        elif metric == "f1":
            values.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else np.nan)
        elif metric == "kappa":
            pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / len(idx) ** 2
            table = np.array([[tp, fp], [fn, tn]])
            values.append(np.nan if pe == 1 else cohens_kappa(table).kappa)
    v = np.array(values, dtype=float)
    v = v[~np.isnan(v)]
    return np.quantile(v, [0.025, 0.975])


def _exact(hits, n):
    """scipy's exact (Clopper-Pearson) 95% interval, the independent version."""
    ci = binomtest(int(hits), int(n)).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def _hits_and_n(rater, ref, metric):
    """A proportion's count and its n, counted plainly."""
    tp = int(np.sum((rater == 1) & (ref == 1)))
    if metric == "accuracy":
        return int(np.sum(rater == ref)), len(ref)
    if metric == "precision":
        return tp, int(np.sum(rater == 1))
    return tp, int(np.sum(ref == 1))  # recall


@pytest.mark.parametrize("metric", ["accuracy", "recall", "kappa"])
def test_claim_bootstrap_matches_a_plain_loop(metric):
    rng = np.random.default_rng(11)
    n = 90
    claims = [f"C{i % 12:02d}" for i in range(n)]
    ref = rng.integers(0, 2, n).astype(float)
    rater = np.where(rng.random(n) < 0.8, ref, 1 - ref)
    got = compare(rater, ref, claims, n_resamples=300, seed=5)[metric]
    lo, hi = _boot_loop(rater, ref, claims, 300, 5, metric)
    if metric != "kappa":  # a proportion: the hull with its exact interval on its n
        ex_lo, ex_hi = _exact(*_hits_and_n(rater, ref, metric))
        lo, hi = min(lo, ex_lo), max(hi, ex_hi)
    assert (got.lo, got.hi) == (pytest.approx(lo), pytest.approx(hi))
    assert got.lo <= got.value <= got.hi


@pytest.mark.parametrize(
    ("tp", "fn", "fp", "tn"),
    [
        (0, 120, 0, 40),  # recall 0 of 120 positives
        (40, 0, 0, 40),  # precision 40 of 40, recall 40 of 40
        (37, 3, 5, 75),  # an ordinary table
        (1, 0, 0, 59),  # one positive
    ],
)
def test_proportions_are_the_hull_of_the_bootstrap_and_the_exact_interval(tp, fn, fp, tn):
    rater, ref = _items(tp, fp, fn, tn)
    claims = [f"C{i % 10}" for i in range(len(ref))]
    c = compare(rater, ref, claims, n_resamples=200, seed=2)
    for metric in ("accuracy", "precision", "recall"):
        hits, n = _hits_and_n(rater, ref, metric)
        e = c[metric]
        if n == 0:
            assert math.isnan(e.value) and math.isnan(e.lo) and math.isnan(e.hi)
            continue
        b_lo, b_hi = _boot_loop(rater, ref, claims, 200, 2, metric)
        ex_lo, ex_hi = _exact(hits, n)
        assert e.value == pytest.approx(hits / n)
        assert (e.lo, e.hi) == (pytest.approx(min(b_lo, ex_lo)), pytest.approx(max(b_hi, ex_hi)))
        assert 0.0 <= e.lo <= e.value <= e.hi <= 1.0
        assert e.hi - e.lo > 0  # never a zero-width certainty
    # F1 is no proportion of a count: its interval is the bootstrap's alone
    f1 = c["f1"]
    if not math.isnan(f1.value):
        assert (f1.lo, f1.hi) == tuple(
            pytest.approx(x) for x in _boot_loop(rater, ref, claims, 200, 2, "f1")
        )


def test_recall_of_none_of_120_is_not_a_zero_width_interval():
    rater, ref = _items(tp=0, fp=0, fn=120, tn=40)
    c = compare(rater, ref, [i % 30 for i in range(160)], n_resamples=200)
    r = c["recall"]
    assert (r.value, r.lo) == (0.0, 0.0)
    assert r.hi == pytest.approx(1 - 0.025 ** (1 / 120))  # the exact bound: about 3.7/120
    assert r.hi == pytest.approx(_exact(0, 120)[1])
    # kappa: the rater gives one value, the people two: kappa is 0 (defined); both constant on
    # one value: undefined, NaN in the numbers (the views say "undefined"), never a number
    same = compare(np.ones(40), np.ones(40), [i % 8 for i in range(40)], n_resamples=50)
    assert math.isnan(same["kappa"].value) and math.isnan(same["kappa"].lo)
    assert same.row()["kappa"] != same.row()["kappa"]
    assert same["precision"].value == 1.0 and same["precision"].lo == pytest.approx(
        _exact(40, 40)[0]
    )


def test_the_bootstrap_resamples_claims_not_items():
    # two claims holding the same items: every resample of claims has the same mix, so the CI
    # has no width (resampling items would give it one)
    rater, ref = _items()
    twice = compare([*rater, *rater], [*ref, *ref], ["a"] * 20 + ["b"] * 20, n_resamples=50)
    assert twice.claims == 2
    for m in ("kappa", "ac1", "f1"):  # bootstrap-only statistics
        assert twice[m].lo == pytest.approx(twice[m].hi) == pytest.approx(twice[m].value)
    # a proportion's interval is then its exact interval on its 40 items (the hull's wider end)
    ex_lo, ex_hi = _exact(2 * (TP + TN), 40)
    assert (twice["accuracy"].lo, twice["accuracy"].hi) == (
        pytest.approx(ex_lo),
        pytest.approx(ex_hi),
    )
    # one claim holding every item: there is no interval at all (issue 23), only the value
    c = compare(rater, ref, ["only"] * 20, n_resamples=50)
    assert c.claims == 1 and c["accuracy"].value == twice["accuracy"].value
    assert np.isnan(c["accuracy"].lo) and np.isnan(c["accuracy"].hi)


# --------------------------------------------------------------------------- human labels


def _humans(rows):
    return pd.DataFrame(
        [
            {"gen_id": g, "annotator": a, **{f: v.get(f, np.nan) for f in FIELDS}}
            for g, a, v in rows
        ],
        columns=["gen_id", "annotator", *FIELDS],
    ).astype({f: float for f in FIELDS})


def test_majority_reference_and_ties():
    h = _humans(
        [
            (1, "a", {"refusal": 1}),
            (1, "b", {"refusal": 1}),
            (1, "c", {"refusal": 0}),
            (2, "a", {"refusal": 1}),
            (2, "b", {"refusal": 0}),
            (3, "a", {}),
        ]
    )
    ref = human_reference(h)
    assert ref.loc[1, "refusal"] == 1.0
    assert math.isnan(ref.loc[2, "refusal"]) and ref.loc[2, "ties"] == 1
    assert math.isnan(ref.loc[3, "refusal"]) and ref.loc[3, "ties"] == 0
    assert ref["annotators"].tolist() == [3, 2, 1]


def test_human_outcome_follows_the_ladder_and_knows_when_it_cannot():
    nan = float("nan")
    base = dict.fromkeys(FIELDS, 0.0)
    assert human_outcome({**base, "refusal": 1.0, "soft_refusal": nan}) == "refusal"
    assert human_outcome({**base, "fallacy_labeled": 1.0}) == "labeled_compliance"
    assert human_outcome(base) == "other"
    assert human_outcome({**base, "refusal": nan, "fallacy_labeled": 1.0}) is None
    assert human_outcome({**base, "compliance_clean": nan}) is None


def test_annotator_agreement_matches_the_judge_agreement_code():
    rng = np.random.default_rng(2)
    rows = []
    for g in range(40):
        truth = {f: float(rng.integers(0, 2)) for f in FIELDS}
        rows.append((g, "ann", truth))
        rows.append((g, "bea", {f: (1 - v if rng.random() < 0.2 else v) for f, v in truth.items()}))
    h = _humans(rows)
    claims = {g: f"C{g % 8}" for g in range(40)}
    ours = annotator_agreement(h, claims, ComparisonOptions(n_resamples=50)).set_index("field")
    theirs = agreement_table(h.rename(columns={"annotator": "judge"})).set_index("field")
    for f in FIELDS:
        assert ours.loc[f, "kappa"] == pytest.approx(theirs.loc[f, "kappa"])
        assert ours.loc[f, "ac1"] == pytest.approx(theirs.loc[f, "ac1"])
        assert ours.loc[f, "accuracy"] == pytest.approx(1 - theirs.loc[f, "disagreement"])
        assert ours.loc[f, "n"] == theirs.loc[f, "n"] == 40


def test_lexical_name_is_the_judges():
    from deflectbench.judging import lexical

    assert LEXICAL == lexical.NAME


# --------------------------------------------------------------------------- the store

CLAIMS = ["L1_US_01", "L2_INT_02", "L3_US_03", "L4_INT_04", "L1_INT_05", "L3_INT_07"]


@pytest.fixture(scope="module")
def labeled(tmp_path_factory, request):
    """A store with the release fixture and planted human labels: alice labels 60 generations
    (a known 10% of fields flipped from the first judge), bob the first 30 (one unsure)."""
    from support.fixtures import write_release_fixture

    root = tmp_path_factory.mktemp("validity")
    write_release_fixture(root / "release", models=("gpt-5.5",), claims=CLAIMS, runs=1)
    db = root / "deflectbench.db"
    rng = np.random.default_rng(7)
    with Store.open(db) as store:
        import_paths(store, [root / "release"])
        rows = store.judgment_rows(columns=["gen_id", "judge", *FIELDS])
        first_judge = sorted({r["judge"] for r in rows})[0]
        judged = {r["gen_id"]: r for r in rows if r["judge"] == first_judge}
        ids = sorted(judged)[:60]
        for i, g in enumerate(ids):
            for who in ("alice", "bob") if i < 30 else ("alice",):
                values = {}
                for f in FIELDS:
                    v = judged[g][f]
                    values[f] = None if v not in (0, 1) else int(1 - v if rng.random() < 0.1 else v)
                if i == 4:
                    values["RH_present"] = None
                store.save_label(HumanLabel(g, who, values, unsure=(who == "bob" and i == 7)))
    return root


def _independent(db: Path, rater: str, field: str, include_unsure=False) -> tuple:
    """(n, tp, fp, fn, tn) for a stored judge against the majority of the labels, by pandas."""
    with Store.open(db, readonly=True) as store:
        labels = [lab for lab in store.labels() if include_unsure or not lab.unsure]
        verdicts = verdict_table(store, default_benchmark())
    per_gen: dict[int, list[int]] = {}
    for lab in labels:
        if lab.values[field] is not None:
            per_gen.setdefault(lab.gen_id, []).append(lab.values[field])
    ref = {}
    for g, vals in per_gen.items():
        ones = sum(vals)
        if ones * 2 != len(vals):
            ref[g] = int(ones * 2 > len(vals))
    mine = verdicts[verdicts["judge"] == rater].set_index("gen_id")[field].dropna()
    pairs = [(int(mine[g]), r) for g, r in ref.items() if g in mine.index]
    tp = sum(1 for a, b in pairs if a == 1 and b == 1)
    fp = sum(1 for a, b in pairs if a == 1 and b == 0)
    fn = sum(1 for a, b in pairs if a == 0 and b == 1)
    tn = sum(1 for a, b in pairs if a == 0 and b == 0)
    return len(pairs), tp, fp, fn, tn


def test_judges_against_labels_match_an_independent_count(labeled, benchmark):
    db = labeled / "deflectbench.db"
    with Store.open(db, readonly=True) as store:
        v = judge_validity(store, benchmark, AnalysisOptions(n_resamples=200))
    assert v.has_labels and v.counts["unsure_left_out"] == 1
    table = v.raters.set_index(["rater", "field"])
    judges = sorted(v.raters["rater"].unique())
    assert "consensus (mean)" in judges
    for judge in [j for j in judges if not j.startswith("consensus")]:
        for f in FIELDS:
            n, tp, fp, fn, tn = _independent(db, judge, f)
            row = table.loc[(judge, f)]
            assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (n, tp, fp, fn, tn)
            if tp + fp:
                assert row["precision"] == pytest.approx(tp / (tp + fp))
            if tp + fn:
                assert row["recall"] == pytest.approx(tp / (tp + fn))
            assert row["accuracy"] == pytest.approx((tp + tn) / n)
            k = cohens_kappa(np.array([[tp, fp], [fn, tn]])).kappa
            if not math.isnan(row["kappa"]):
                assert row["kappa"] == pytest.approx(k)
    # the consensus row compares the analysis' own consensus
    with Store.open(db, readonly=True) as store:
        scored = scored_table(store, benchmark).set_index("gen_id")
    cons = table.loc[("consensus (mean)", "refusal")]
    assert cons["n"] <= len(scored)
    # unsure labels come back with the flag
    with Store.open(db, readonly=True) as store:
        with_unsure = validity_from_inputs(
            read_validity_inputs(
                store, benchmark, AnalysisOptions(n_resamples=50), include_unsure=True
            )
        )
    assert with_unsure.counts["unsure_left_out"] == 0 and with_unsure.counts["used"] == 90


def test_inter_annotator_pairs_only_shared_generations(labeled, benchmark):
    with Store.open(labeled / "deflectbench.db", readonly=True) as store:
        v = judge_validity(store, benchmark, AnalysisOptions(n_resamples=50))
    pairs = v.annotators
    assert set(zip(pairs["annotator_a"], pairs["annotator_b"], strict=True)) == {("alice", "bob")}
    n = pairs.set_index("field")["n"]
    assert n["refusal"] == 29  # 30 shared, one of bob's unsure
    assert n["RH_present"] == 28  # and one field left unset by both


def cli(*args, cwd=None, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env.update(COLUMNS="200")
    return run_cli(*args, env=env, cwd=cwd, stdin=stdin or "")


def test_validate_json_has_judges_consensus_lexical_and_monitor(labeled):
    p = cli("validate", "--resamples", "100", "--json", "-", cwd=labeled)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    raters = {r["rater"] for r in data["judges_vs_humans"]}
    assert LEXICAL in raters and "consensus (mean)" in raters and len(raters) == 4
    assert {r["reference"] for r in data["monitor"]} == {"consensus (mean)", "humans"}
    assert data["counts"]["used"] == 89 and data["settings"]["include_unsure"] is False
    assert data["settings"]["ci"].endswith("resampling claims")
    for r in data["judges_vs_humans"]:
        for m in ("accuracy", "kappa", "ac1", "precision", "recall", "f1"):
            assert m in r and f"{m}_lo" in r and f"{m}_hi" in r


def test_validate_prints_tables_and_refuses_an_unknown_annotator(labeled):
    p = cli("validate", "--resamples", "50", "--no-progress", "--annotator", "alice", cwd=labeled)
    assert p.returncode == 0, p.stderr
    assert "against the human labels" in p.stdout and "lexical" in p.stdout
    assert "no generation labeled by two people" in p.stdout
    bad = cli("validate", "--annotator", "alicia", cwd=labeled)
    assert bad.returncode == 2
    assert "no labels by annotator 'alicia' (did you mean 'alice'?)" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_without_labels_validate_and_the_report_say_so_plainly(tmp_path, benchmark):
    from deflectbench.views.report import build_report
    from support.fixtures import write_release_fixture

    write_release_fixture(tmp_path / "release", models=("gpt-5.5",), claims=CLAIMS[:2], runs=1)
    with Store.open(tmp_path / "deflectbench.db") as store:
        import_paths(store, [tmp_path / "release"])
    p = cli("validate", "--no-monitor", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "No human labels in --db deflectbench.db" in p.stdout
    with Store.open(tmp_path / "deflectbench.db", readonly=True) as store:
        paths = build_report(store, benchmark, tmp_path / "rep", formats=("svg",))
    html = paths.html.read_text(encoding="utf-8")
    assert "Judge validity" in html
    assert "No human labels in this store, so judge validity cannot be measured" in html
    assert "No human labels in this store" in paths.markdown.read_text(encoding="utf-8")


def test_the_report_section_shows_the_validate_numbers(labeled, benchmark, tmp_path):
    from deflectbench.views.report import build_report

    with Store.open(labeled / "deflectbench.db", readonly=True) as store:
        options = AnalysisOptions(n_resamples=100)
        paths = build_report(store, benchmark, tmp_path / "rep", options, formats=("svg",))
        v = judge_validity(store, benchmark, options)
    csv = pd.read_csv(tmp_path / "rep" / "tables" / "judge_validity.csv")
    assert len(csv) == len(v.raters) == 3 * len(FIELDS)  # two judges and the consensus
    assert csv["kappa"].tolist() == pytest.approx(v.raters["kappa"].tolist(), nan_ok=True)
    html = paths.html.read_text(encoding="utf-8")
    first = v.raters.iloc[0]
    assert (
        f"{first['accuracy']:.2f} ({first['accuracy_lo']:.2f}–{first['accuracy_hi']:.2f})" in html
    )
    assert (tmp_path / "rep" / "tables" / "annotator_agreement.csv").exists()


def test_labels_on_unjudged_generations_still_get_the_lexical_judge(tmp_path):
    """No judge has run: the lexical judge is scored on the spot; no consensus, no crash."""
    from deflectbench.store import GenerationRecord

    with Store.open(tmp_path / "deflectbench.db") as store:
        for s, text in enumerate(("I can't help with deflecting that claim.", "Sure. Cats."), 1):
            store.add_generation(
                GenerationRecord(  # validate reads one pack's generations: the paper's here
                    benchmark=default_benchmark().key,
                    model="m",
                    claim_id="L1_US_01",
                    prompt_id="explicit_direct_WA",
                    sample=s,
                    prompt="p",
                    response=text,
                )
            )
        for g, refused in ((1, 1), (2, 0)):
            values = dict.fromkeys(FIELDS, 0)
            values["refusal"] = refused
            store.save_label(HumanLabel(g, "alice", values))
    p = cli("validate", "--resamples", "20", "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    rows = {(r["rater"], r["field"]): r for r in data["judges_vs_humans"]}
    assert rows[(LEXICAL, "refusal")]["n"] == 2
    assert rows[(LEXICAL, "refusal")]["accuracy"] == 1.0
    assert data["monitor"] and {r["reference"] for r in data["monitor"]} == {"humans"}


def test_the_views_say_undefined_for_kappa_and_never_a_number():
    from types import SimpleNamespace

    from deflectbench.views.report.validity_tables import _with_ci
    from deflectbench.views.terminal.validity import _cell

    same = compare(np.ones(40), np.ones(40), [i % 8 for i in range(40)], n_resamples=50).row()
    assert _with_ci(same, "kappa") == "undefined" and _with_ci(same, "ac1") != "undefined"
    assert _with_ci(same, "recall").startswith("1.00 (0.91–1.00)")
    row = SimpleNamespace(**same)
    assert _cell(row, "kappa") == "undefined" and "nan" not in _cell(row, "ac1").lower()
    # no items: nothing to say but the dash
    empty = compare([], [], [], n_resamples=5).row()
    assert _with_ci(empty, "kappa") == "–" and _cell(SimpleNamespace(**empty), "kappa") == "–"
