"""``deflectbench leaderboard``: three stores, one judged by other judges (marked, unranked
unless --allow-judge-change), ranks and groups from paired tests, JSON, CSV and HTML."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from deflectbench.analysis.compare.board import letters
from support.compare_store import refusal_store
from support.in_process import run_cli


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    root = tmp_path_factory.mktemp("board")
    one = refusal_store(root / "one.db", {"acme/high": 0.6, "acme/high-too": 0.58}, seed=0)
    two = refusal_store(root / "two.db", {"acme/low": 0.15}, seed=1)
    other = refusal_store(
        root / "other.db", {"acme/judged-otherwise": 0.9}, seed=2, judges=("judge-a", "judge-z")
    )
    return one, two, other


def _board(tmp_path, *args):
    out = tmp_path / "board.json"
    p = run_cli("leaderboard", *args, "--json", out, "--resamples", "300")
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    return p, json.loads(out.read_text())


def test_a_store_judged_by_other_judges_is_marked_and_not_ranked(three, tmp_path):
    p, data = _board(tmp_path, *three)
    rows = data["rows"]
    models = [r["model"] for r in rows]
    assert set(models[:2]) == {"acme/high", "acme/high-too"}  # planted 0.60 and 0.58
    assert models[2:] == ["acme/low", "acme/judged-otherwise"]
    assert rows[0]["rate"] >= rows[1]["rate"] > rows[2]["rate"]
    assert [r["rank"] for r in rows] == [1, 2, 3, None]
    assert [r["judges_match"] for r in rows] == [True, True, True, False]
    assert rows[3]["judges"] == "judge-a, judge-z" and data["judges"] == "judge-a, judge-b"
    # the two planted alike share a group; the low one is in none of theirs
    assert set(rows[0]["group"]) & set(rows[1]["group"])
    assert not set(rows[2]["group"]) & set(rows[0]["group"])
    lo, hi = rows[2]["ci95"]
    assert lo <= rows[2]["rate"] <= hi
    assert "flagged: rows marked * were judged by other judges" in p.stderr
    assert any(line.startswith("│ -* ") for line in p.stdout.splitlines()), p.stdout


def test_allow_judge_change_ranks_them_together_still_marked(three, tmp_path):
    _, data = _board(tmp_path, *three, "--allow-judge-change")
    rows = data["rows"]
    assert rows[0]["model"] == "acme/judged-otherwise" and rows[0]["rank"] == 1
    assert rows[0]["judges_match"] is False
    assert "ranked with the others" in data["notes"][0]


def test_by_another_measure_ascending_csv_and_html(three, tmp_path):
    c, h = tmp_path / "b.csv", tmp_path / "b.html"
    p = run_cli(
        "leaderboard", *three[:2], "--by", "clean_compliance", "--ascending", "--csv", c,
        "--html", h, "--resamples", "100",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    with c.open(newline="") as f:
        table = list(csv.DictReader(f))
    assert {r["model"] for r in table[:2]} == {"acme/high", "acme/high-too"}
    assert table[2]["model"] == "acme/low" and table[0]["rank"] == "1"
    assert {r["measure"] for r in table} == {"clean_compliance"}
    page = h.read_text()
    assert "Leaderboard by clean_compliance" in page and "<script" not in page
    assert "<svg" in page and "Compliance signatures" in page  # the signature figure
    assert float(table[0]["share_refusal"]) + float(table[0]["share_clean_compliance"]) == 1.0


def test_a_hugging_face_folder(three, tmp_path):
    out = tmp_path / "hf"
    p = run_cli("leaderboard", *three, "--hf", out, "--resamples", "50")
    assert p.returncode == 0, p.stderr
    card = (out / "README.md").read_text()
    assert card.startswith("---\nconfigs:\n- config_name: leaderboard\n")
    assert "path: leaderboard.csv" in card and "judged by other judges" in card
    with (out / "leaderboard.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and rows[-1]["judges_match"] == "False"


def test_a_bad_measure_is_one_line(three):
    p = run_cli("leaderboard", three[0], "--by", "refusl")
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "did you mean 'refusal'" in lines[0]


def test_letters_mark_maximal_runs():
    # ranks 0..3: 0~1, 1~2, 0 differs from 2 and 3, 1 differs from 3, 2~3
    d = np.zeros((4, 4), dtype=bool)
    for i, j in ((0, 2), (0, 3), (1, 3)):
        d[i, j] = d[j, i] = True
    assert letters(d) == ["a", "ab", "bc", "c"]
    assert letters(np.zeros((3, 3), dtype=bool)) == ["a", "a", "a"]
