"""``deflectbench plan`` through the command line: the cheapest design beside the paper's from
the paper's spreads and from a pilot store (judged by the expensive judges and the lexical
one); ``--json`` is ``deflectbench.plan(...).to_json()``; no reachable design is exit 1 with
the narrowest said; a target the grammar refuses, a missing pilot or no expensive judge is
one line, exit 2."""

from __future__ import annotations

import json

import pytest

from support.calibration_store import CLAIMS
from support.fixtures import write_release_fixture
from support.in_process import run_cli


def _one_line_error(p) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    from deflectbench.interop import import_paths
    from deflectbench.store import Store

    root = tmp_path_factory.mktemp("pilot")
    write_release_fixture(
        root / "release", models=("gpt-5.5", "grok-4.3"), claims=CLAIMS, runs=3, judge_error=0.08
    )
    db = root / "pilot.db"
    with Store.open(db) as store:
        import_paths(store, [root / "release"])
    p = run_cli("judge", "--judge", "lexical", "--db", db)
    assert p.returncode == 0, p.stderr
    return db


def test_no_pilot_per_framing_at_3pp_is_out_of_reach_and_says_the_narrowest():
    p = run_cli("plan", "--target", "refusal +-3pp per model x framing", env={"COLUMNS": "120"})
    assert p.returncode == 1, p.stderr
    assert "no design within the bounds reaches refusal +-3pp per model x framing" in p.stdout
    assert "paper's full design" in p.stdout and "published spreads" in p.stdout
    data = json.loads(
        run_cli("plan", "--target", "refusal +-3pp per model x framing", "--json", "-").stdout
    )
    assert data["reached"] is False and data["best"] is None
    paper = data["paper"]
    assert paper["generations"] == 24_000  # the paper's 4 models x 80 claims x 15 x 5
    assert set(paper["judge_calls"].values()) == {24_000}
    assert paper["price_usd"] is None and "xai/grok-4.3" in paper["unpriced"]
    assert data["narrowest"]["samples"] == 10 and data["narrowest"]["halfwidth"] > 0.03


def test_json_is_the_public_functions_result(tmp_path):
    import deflectbench

    out = tmp_path / "plan.json"
    p = run_cli("plan", "--target", "refusal +-3pp per model", "--json", out)
    assert p.returncode == 0, p.stderr
    assert f"plan: {out.resolve()}" in p.stdout
    result = deflectbench.plan("refusal +-3pp per model")
    assert json.loads(out.read_text()) == json.loads(json.dumps(result.to_json()))
    assert result.exit_code == 0 and result.best is not None
    assert result.best.worst_halfwidth <= 0.03
    assert result.best.price_by_provider["openai"] < result.paper.price_by_provider["openai"]


def test_a_pilot_measures_the_components_and_the_cheap_judges_agreement(pilot):
    p = run_cli("plan", "--target", "refusal +-4pp per model", "--pilot", pilot, "--json", "-")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["source"].startswith("the pilot ")
    cells = {tuple(c["cell"]): c for c in data["cells"]}
    assert set(cells) == {("gpt-5.5",), ("grok-4.3",)}
    for c in cells.values():
        assert c["rho_measured"] and 0 < c["rho"] < 1
        assert c["claims"] == len(CLAIMS) and c["samples"] == pytest.approx(3)
        assert c["sigma2_within"] > 0
    best = data["best"]
    assert best["worst_halfwidth"] <= 0.04 and best["claims"] % 4 == 0
    # the pilot's bare release names are priced as their providers' models
    assert "openai" in best["price_usd_by_provider"]
    text = run_cli("plan", "--target", "refusal +-4pp per model", "--pilot", pilot).stdout
    assert "Variance components per cell" in text and "gpt-5.5" in text


def test_a_pilot_per_framing_plan_has_a_cell_per_model_and_framing(pilot):
    p = run_cli(
        "plan", "--target", "refusal +-10pp per model x framing", "--pilot", pilot, "--json", "-"
    )
    assert p.returncode in (0, 1), p.stderr
    data = json.loads(p.stdout)
    keys = {tuple(c["cell"]) for c in data["cells"]}
    assert ("gpt-5.5", "coach") in keys and len(keys) == 14
    templates = {tuple(c["cell"]): c["templates"] for c in data["cells"]}
    assert templates[("gpt-5.5", "coach")] == 3 and templates[("gpt-5.5", "choose")] == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--target", "refusal +-3pp per claim"], "unknown scope 'claim'"),
        (["--target", "refusals +-3pp per model"], "unknown measure 'refusals'"),
        (["--target", "refusal +-3pp per model", "--pilot", "nowhere.db"], "nowhere.db"),
        (["--target", "refusal +-3pp per model", "--judge", "lexical"], "no expensive judge"),
        (["--target", "refusal +-3pp per model", "--quantile", "0"], "--quantile"),
    ],
)
def test_refusals_are_one_line(args, says, tmp_path):
    line = _one_line_error(run_cli("plan", *args, cwd=tmp_path))
    assert says in line
