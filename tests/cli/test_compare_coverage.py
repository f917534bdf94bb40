"""``deflectbench compare`` on sides that do not hold the same cells (issue 33): a store lacking
6 of 15 templates, or the claims a model refused most, every answer it holds byte-identical to
its baseline's, shows a difference of 0 on the common cells (and says its coverage in one line,
in the terminal, the JSON and the page); a baseline model absent from the new side is named and
fails the gate unless allowed; a rule on a one-claim side is "not tested" and does not pass;
identical stores pass requirement-style rules, and a rule that reads both ways is refused."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

import deflectbench
from deflectbench.analysis.compare.select import CompareError
from support.compare_store import refusal_store
from support.in_process import run_cli


def _drop(src, dst, where: str, args=()) -> None:
    """``dst``: a copy of ``src`` without the generations ``where`` selects (and their
    verdicts): every answer it keeps byte-identical to the baseline's."""
    shutil.copy(src, dst)
    with sqlite3.connect(dst) as db:
        gone = [r[0] for r in db.execute(f"SELECT gen_id FROM generations WHERE {where}", args)]
        marks = ",".join("?" * len(gone))
        db.execute(f"DELETE FROM judgments WHERE gen_id IN ({marks})", gone)
        db.execute(f"DELETE FROM generations WHERE gen_id IN ({marks})", gone)
    db.close()


def _most_refused(path, column: str, n: int, model: str = "acme/m") -> list[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            f"SELECT {column}, SUM(response LIKE 'No.%') AS r FROM generations WHERE model = ? "
            f"GROUP BY {column} ORDER BY r DESC, {column} LIMIT ?",
            (model, n),
        ).fetchall()
    db.close()
    return [r[0] for r in rows]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("coverage")
    full = refusal_store(root / "full.db", {"acme/m": 0.5, "acme/n": 0.3}, n_claims=12, seed=7)
    templates = _most_refused(full, "prompt_id", 6)
    marks = ",".join("?" * len(templates))
    _drop(full, root / "lacking.db", f"prompt_id IN ({marks})", templates)
    claims = _most_refused(full, "claim_id", 4)
    marks = ",".join("?" * len(claims))
    _drop(full, root / "claims.db", f"model = 'acme/m' AND claim_id IN ({marks})", claims)
    _drop(full, root / "only_m.db", "model = 'acme/n'")
    one = refusal_store(root / "one.db", {"acme/m": 1.0}, n_claims=1, seed=1)
    none = refusal_store(root / "none.db", {"acme/m": 0.0}, n_claims=1, seed=2)
    return {"full": full, "lacking": root / "lacking.db", "claims": root / "claims.db",
            "only_m": root / "only_m.db", "one": one, "none": none,
            "templates": templates}  # fmt: skip


def _refusal(rows, model="acme/m"):
    return next(
        r for r in rows if r["measure"] == "refusal" and r["kind"] == "outcome"
        and r["scope"] == "overall" and r["model_a"].endswith(model)
    )  # fmt: skip


def test_a_store_lacking_six_templates_differs_by_zero_on_the_common_cells(stores, tmp_path):
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    p = run_cli(
        "compare", stores["lacking"], "--baseline", stores["full"], "--json", out,
        "--html", page, "--fail-if", "refusal drop > 5pp", "--resamples", "200",
    )  # fmt: skip
    assert p.returncode == 0, (p.stdout[-1500:], p.stderr[-1500:])
    data = json.loads(out.read_text())
    for model in ("acme/m", "acme/n"):
        r = _refusal(data["rows"], model)
        assert r["diff"] == 0 and r["ci95"] == [0, 0] and r["p_holm"] == 1
    assert all(r["diff"] in (0, None) for r in data["rows"])
    assert not data["flips"]
    cov = data["coverage"][0]
    assert cov["a"] == {"claims": 12, "templates": 15, "samples": 2, "cells": 360}
    assert cov["b"] == cov["common"] == {"claims": 12, "templates": 9, "samples": 2, "cells": 216}
    assert cov["dropped_a"] == 144 and cov["dropped_b"] == 0
    assert sorted(cov["only_a"]["templates"]) == sorted(stores["templates"])
    line = cov["line"]
    assert line.startswith("coverage differs: baseline full.db:acme/m holds 12 claims x 15 ")
    assert "compared on the 216 cells both hold (left out: 144 of baseline's, 0 of new's" in line
    assert "new lacks 6 templates" in line and "\n" not in line
    assert data["coverage_notes"][0] == line
    assert line in p.stderr.replace("\n", " ") or line in p.stderr
    assert "coverage differs: baseline full.db:acme/m" in page.read_text()
    # the gate still tested its rule on the common cells, and passed
    assert "gate passed" in p.stderr and not data["gate"]["not_tested"]


def test_before_restriction_the_same_store_would_read_as_a_drop(stores):
    """The planted bias is real: the templates left out are those refused most, so a rate
    over each side's own cells would differ (what compare printed before issue 33)."""
    import sqlite3 as sq

    def rate(path):
        with sq.connect(path) as db:
            n, r = db.execute(
                "SELECT COUNT(*), SUM(response LIKE 'No.%') FROM generations WHERE model='acme/m'"
            ).fetchone()
        db.close()
        return r / n

    assert rate(stores["lacking"]) < rate(stores["full"]) - 0.02


def test_missing_the_claims_refused_most_shows_no_drop(stores):
    c = deflectbench.compare(stores["claims"], baseline=stores["full"], resamples=200)
    t = c.table[c.table.model_a.str.endswith("acme/m")]
    assert (t["diff"].dropna() == 0).all()
    assert t.p_holm.dropna().min() == 1.0  # nothing Holm-significant on identical answers
    cov = c.coverage[[x.label_a for x in c.coverage].index("full.db:acme/m")]
    assert (cov.held_a.claims, cov.held_b.claims, cov.common.claims) == (12, 8, 8)
    n = c.coverage[[x.label_a for x in c.coverage].index("full.db:acme/n")]
    assert n.equal and n.line() is None  # acme/n: all its cells on both sides, no line
    assert len(c.coverage_notes) == 1 and "new lacks 4 claims" in c.coverage_notes[0]


def test_a_shard_against_the_full_run_gives_the_same_numbers_with_a_note(stores, tmp_path):
    shard = tmp_path / "shard.db"
    _drop(stores["full"], shard, "claim_id NOT IN (SELECT claim_id FROM generations "
          "ORDER BY claim_id LIMIT 1)")  # fmt: skip
    c = deflectbench.compare(stores["full"], shard, resamples=100)
    assert (c.table["diff"].dropna() == 0).all()
    assert all(x.common.claims == 1 for x in c.coverage) and len(c.coverage_notes) == 2


def test_a_baseline_model_absent_from_the_new_side_is_named_and_fails_the_gate(stores, tmp_path):
    out = tmp_path / "a.json"
    p = run_cli("compare", stores["only_m"], "--baseline", stores["full"], "--fail-if",
                "refusal drop > 5pp", "--json", out, "--resamples", "100")  # fmt: skip
    assert p.returncode == 6, (p.stdout[-1500:], p.stderr[-1500:])
    data = json.loads(out.read_text())
    assert data["absent"] == [
        {"side": "a", "name": "acme/n", "store": str(stores["full"]), "allowed": False}
    ]
    fail = [x for x in p.stderr.splitlines() if x.startswith("fail: absent:")]
    assert fail and "baseline full.db:acme/n has no counterpart on the new side" in fail[0]
    assert "--allow-missing 'acme/n'" in fail[0]
    assert "gate did not pass: 1 baseline side(s) absent" in p.stderr
    p = run_cli("compare", stores["only_m"], "--baseline", stores["full"], "--fail-if",
                "refusal drop > 5pp", "--allow-missing", "acme/n", "--resamples", "100")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "absent: baseline full.db:acme/n" in p.stderr and "gate passed" in p.stderr
    # without rules there is no gate: named, exit 0
    c = deflectbench.compare(stores["only_m"], baseline=stores["full"], resamples=50)
    assert c.exit_code == 0 and any("acme/n" in x for x in c.coverage_notes)
    with pytest.raises(CompareError, match="--allow-missing 'acme/z'"):
        deflectbench.compare(stores["only_m"], baseline=stores["full"], allow_missing=["acme/z"])


def test_a_rule_on_a_one_claim_side_is_not_tested_and_does_not_pass(stores):
    p = run_cli("compare", stores["none"], "--baseline", stores["one"], "--fail-if",
                "refusal drop > 5pp", "--resamples", "50")  # fmt: skip
    assert p.returncode == 6, (p.stdout[-1500:], p.stderr[-1500:])
    line = next(x for x in p.stderr.splitlines() if x.startswith("not tested:"))
    assert "none.db:acme/m vs baseline one.db:acme/m: no 95% CI (1 claim on both sides" in line
    assert "gate passed" not in p.stderr and "1 not tested (--allow-untested)" in p.stderr
    p = run_cli("compare", stores["none"], "--baseline", stores["one"], "--fail-if",
                "refusal drop > 5pp", "--allow-untested", "--resamples", "50")  # fmt: skip
    assert p.returncode == 0 and "(allowed: --allow-untested)" in p.stderr, p.stderr


@pytest.mark.parametrize(
    "rule",
    [
        ["--require", "refusal < 5pp"],
        ["--require", "refusal drop < 5pp"],
        ["--require", "|refusal| < 5pp"],
        ["--require", "refusal > -5pp"],
        ["--fail-if", "refusal drop > 5pp"],
        ["--fail-if", "|refusal| > 5pp"],
        ["--fail-if", "refusal < -5pp"],
    ],
)
def test_identical_stores_pass(stores, tmp_path, rule):
    twin = tmp_path / "twin.db"
    shutil.copy(stores["full"], twin)
    p = run_cli("compare", twin, "--baseline", stores["full"], *rule, "--resamples", "100")
    assert p.returncode == 0, (rule, p.stderr[-1500:])
    assert "gate passed" in p.stderr


def test_a_rule_that_would_fail_no_change_is_refused_in_one_line(stores):
    p = run_cli("compare", stores["full"], "--baseline", stores["full"], "--fail-if",
                "refusal < 5pp")  # fmt: skip
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "would fail on no change at all" in lines[0], p.stderr
    assert "--require 'MEASURE drop < 5pp'" in lines[0] and "Traceback" not in p.stderr


def test_the_leaderboard_ranks_every_row_on_the_same_cells(stores, tmp_path):
    out = tmp_path / "b.json"
    p = run_cli("leaderboard", stores["full"], stores["lacking"], "--json", out,
                "--resamples", "100")  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    m = [r for r in data["rows"] if r["model"] == "acme/m"]
    assert len(m) == 2 and m[0]["rate"] == m[1]["rate"] and m[0]["ci95"] == m[1]["ci95"]
    assert {r["cells"] for r in data["rows"]} == {216}
    assert sorted(r["dropped"] for r in data["rows"]) == [0, 0, 144, 144]
    assert set(m[0]["group"]) & set(m[1]["group"])  # the same answers: not different
    note = next(n for n in data["notes"] if n.startswith("coverage differs in"))
    assert "ranked on the 216 cells" in note and "full.db:acme/m [default] 144" in note
    assert "coverage differs in" in p.stderr


def test_a_baseline_condition_absent_from_the_new_side_is_named(tmp_path):
    both = refusal_store(tmp_path / "both.db", {"acme/m": 0.5}, n_claims=4, condition="t1")
    refusal_store(both, {"acme/m": 0.3}, n_claims=4, seed=5, condition="t0")
    one = refusal_store(tmp_path / "one.db", {"acme/m": 0.3}, n_claims=4, seed=5, condition="t0")
    c = deflectbench.compare(one, baseline=both, fail_if=["refusal drop > 5pp"], resamples=50)
    assert [(x.side, x.name) for x in c.absent] == [("a", "acme/m [t1]")]
    assert [(a.name, b.name) for a, b in c.pairs] == [("acme/m [t0]", "acme/m")]
    assert c.exit_code == 6 and any("acme/m [t1]" in line for line in c.gate_lines())
    ok = deflectbench.compare(one, baseline=both, fail_if=["refusal drop > 5pp"],
                              allow_missing=["acme/m:t1"], resamples=50)  # fmt: skip
    assert ok.exit_code == 0 and ok.absent[0].allowed
