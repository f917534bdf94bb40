"""Every number the report shows is the analysis JSON's, after the report's formatting.

One fixture store (the release format, imported) gives both ``analyze``'s JSON (as
``deflectbench analyze --json`` writes it) and the report. The test parses report.html and
report.md: every table cell, key number, caption, alt text and note of the statistics sections
is read back, each number in it looked up in the JSON and compared after the report's
formatting (one decimal for percentages, two for kappa/AC1/h, ...). A final sweep fails on any
text of those sections that still holds a digit no check accounted for, so a number added to the
report later without a source in the JSON is caught. The example responses and the run
metadata (texts, dates, sample numbers) are not statistics and are left out.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pytest

from deflectbench.analysis import AnalysisOptions, analyze
from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.store import Store
from deflectbench.views.report import build_report
from deflectbench.vocab import FIELDS, FRAMINGS, LEVEL_NAMES, OUTCOMES
from support.fixtures import write_release_fixture

DASH = "–"
#: A priced model and priced judges, so the cost table holds dollars (and a zero-token row).
MODELS = ("claude-opus-4-7", "openai/gpt-5", "grok-4.3")
JUDGES = ("anthropic/claude-haiku-4-5-20251001", "openai/gpt-5-mini")
OUTCOME_LABEL = {o: o.replace("_", " ") for o in OUTCOMES}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    b = default_benchmark()
    root = tmp_path_factory.mktemp("numbers")
    # 9 claims, every level and both contexts: fewer than 10, so the small-sample note shows
    claims = [c.claim_id for c in b.claims][::9]
    write_release_fixture(
        root / "files",
        claims=claims,
        runs=2,
        seed=7,
        models=MODELS,
        judges=JUDGES,
        error_rate=0.01,
        parse_error_rate=0.01,
    )
    with Store.open(root / "n.db") as store:
        import_paths(store, [root / "files"], b)
    options = AnalysisOptions(n_resamples=200, seed=3)
    with Store.open(root / "n.db", readonly=True) as store:
        data = json.loads(json.dumps(analyze(store, b, options), allow_nan=False))
        paths = build_report(store, b, root / "out", options, formats=("svg",))
    return b, data, paths


# --------------------------------------------------------------------------- the report's formats


def f_pct(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.1f}%"


def f_num(x: float | None, fmt: str = ".2f") -> str:
    return DASH if x is None else format(x, fmt)


def f_p(x: float | None) -> str:
    return DASH if x is None else "< 0.001" if x < 0.001 else f"{x:.3f}"


def f_count(n: int) -> str:
    return f"{n:,}"


def parse_ci(text: str) -> tuple[str, str | None, str | None]:
    """``27.7% (21.7–32.3)`` -> ("27.7", "21.7", "32.3"); ``27.7%`` -> ("27.7", None, None)."""
    m = re.fullmatch(r"(-?\d+\.\d)%(?: \((-?\d+\.\d)–(-?\d+\.\d)\))?", text)
    assert m, text
    return m.group(1), m.group(2), m.group(3)


def same_ci(text: str, entry: dict[str, Any] | None) -> bool:
    """The cell's rate and CI bounds are the JSON entry's, each in percent to one decimal."""
    if entry is None or entry["rate"] is None:
        return text == DASH
    rate, lo, hi = parse_ci(text)
    want = [f"{100 * v:.1f}" if v is not None else None for v in (entry["rate"], *entry["ci95"])]
    if want[1] is None or want[2] is None:
        return (rate, lo, hi) == (want[0], None, None)
    return (rate, lo, hi) == tuple(want)


def same_pct(text: str, x: float | None) -> bool:
    if x is None:
        return text == DASH
    m = re.fullmatch(r"(-?\d+\.\d)%", text)
    return bool(m) and m.group(1) == f"{100 * x:.1f}"


def same_count(text: str, n: int) -> bool:
    return re.fullmatch(r"\d{1,3}(,\d{3})*", text) is not None and int(text.replace(",", "")) == n


# --------------------------------------------------------------------------- reading the pages


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []

    def text(self) -> str:
        raw = "".join(c if isinstance(c, str) else c.text() for c in self.children)
        return " ".join(raw.split())

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find(self, tag: str, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if n.tag == tag and all(attrs[k] in (n.attrs.get(k) or "").split() for k in attrs)
        ]


class Dom(HTMLParser):
    VOID: ClassVar[set[str]] = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def html_tables(section: Node) -> dict[str, dict[str, Any]]:
    out = {}
    for block in section.find("div", **{"class": "table-block"}):
        name = block.attrs["id"].removeprefix("table-")
        notes = block.find("p", **{"class": "note"})
        out[name] = {
            "title": block.find("h3")[0].text(),
            "header": [th.text() for th in block.find("th")],
            "rows": [[td.text() for td in tr.find("td")] for tr in block.find("tr")[1:]],
            "note": notes[0].text() if notes else "",
        }
    return out


def md_unescape(text: str) -> str:
    text = text.replace("\\<", "<").replace("\\>", ">")
    return re.sub(r"\\(.)", r"\1", text)


def md_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [md_unescape(c.strip()) for c in cells]


def md_tables(md: str, titles: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The Markdown's tables, named by matching their titles with the HTML's."""
    lines = md.splitlines()
    out = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(r"\*\*(.+)\*\*", line)
        if not m or md_unescape(m.group(1)) not in titles:
            continue
        table: dict[str, Any] = {"title": md_unescape(m.group(1)), "header": [], "rows": []}
        table["note"] = ""
        for follow in lines[i + 1 :]:
            if follow.startswith("CSV: "):
                break
            if follow.startswith("|") and not table["header"]:
                table["header"] = md_cells(follow)
            elif follow.startswith("|") and not re.fullmatch(r"\|( -+:? \|)+", follow):
                table["rows"].append(md_cells(follow))
            elif follow.startswith("_") and follow.endswith("_"):
                table["note"] = md_unescape(follow[1:-1])
        out[titles[table["title"]]] = table
    return out


# --------------------------------------------------------------------------- table checks


def check_headline_rates(j, t):
    assert [r[0] for r in t["rows"]] == j["counts"]["models"]
    for m, n, *cells in t["rows"]:
        assert same_count(n, j["models"][m]["n"]), (m, n)
        for o, cell in zip(OUTCOMES, cells, strict=True):
            assert same_ci(cell, j["models"][m]["outcomes"][o]), (m, o, cell)
    resamples, seed = re.search(r"([\d,]+) resamples of claims \(seed (\d+)\)", t["note"]).groups()
    assert same_count(resamples, j["n_resamples"]) and int(seed) == j["seed"]
    assert f"consensus rule: {j['consensus']}." in t["note"]


def check_field_rates(j, t):
    models = t["header"][1:]
    assert models == j["counts"]["models"] and [r[0] for r in t["rows"]] == list(FIELDS)
    for f, *cells in t["rows"]:
        for m, cell in zip(models, cells, strict=True):
            assert same_ci(cell, j["models"][m]["rates"][f]), (m, f, cell)


def check_cohens_h(j, t):
    models = t["header"][2:]
    want = []
    for comp in j["models"][models[0]]["cohens_h"]:
        for measure in j["models"][models[0]]["cohens_h"][comp]:
            hs = [j["models"][m]["cohens_h"][comp][measure] for m in models]
            if any(h is not None for h in hs):
                want.append((comp.replace("_vs_", " vs "), measure.replace("_", " ")))
    assert [tuple(r[:2]) for r in t["rows"]] == want
    for comp, measure, *cells in t["rows"]:
        for m, cell in zip(models, cells, strict=True):
            h = j["models"][m]["cohens_h"][comp.replace(" vs ", "_vs_")][measure.replace(" ", "_")]
            assert cell == f_num(h), (m, comp, measure, cell)


def check_by_prompt(j, t):
    models = t["header"][3:]
    for prompt, _framing, _fallacy, *cells in t["rows"]:
        for m, cell in zip(models, cells, strict=True):
            assert same_pct(cell, j["models"][m]["by_prompt"][prompt]["refusal"]), (m, prompt)


def check_coach_labeling(j, t):
    """E.3 as field rates (labeled, clean, refusal), not outcome shares."""
    rows = j["appendix"]["coach_field_rates"]
    assert [tuple(r[:2]) for r in t["rows"]] == [(r["model"], r["fallacy_requested"]) for r in rows]
    for (_, _, n, labeled, clean, refusal), r in zip(t["rows"], rows, strict=True):
        assert same_count(n, r["n"])
        assert same_pct(labeled, r["fallacy_labeled"])
        assert same_pct(clean, r["compliance_clean"])
        assert same_pct(refusal, r["refusal"])


BREAKDOWN_FIELDS = ("refusal", "soft_refusal", "any_fallacy_present", "fallacy_labeled")
BREAKDOWN_FIELDS += ("compliance_clean",)


def _check_breakdown(rows, t, key, label):
    assert [tuple(r[:2]) for r in t["rows"]] == [(r["model"], label(r[key])) for r in rows]
    for (_, _, n, *cells), r in zip(t["rows"], rows, strict=True):
        assert same_count(n, r["n"])
        for f, cell in zip(BREAKDOWN_FIELDS, cells, strict=True):
            assert same_pct(cell, r[f]), (r["model"], r[key], f, cell)


def check_by_model_level(j, t):
    rows = j["appendix"]["by_model_level"]
    _check_breakdown(rows, t, "level", lambda v: f"{v} {LEVEL_NAMES[v].replace('_', ' ')}")
    assert {r["level"] for r in rows} == {1, 2, 3, 4}


def check_by_model_context(j, t):
    rows = j["appendix"]["by_model_context"]
    _check_breakdown(rows, t, "context", str)
    assert {r["context"] for r in rows} == {"us", "international"}


def check_fallacy_swing(j, t):
    rows = j["appendix"]["fallacy_swing"]
    assert [r[0] for r in t["rows"]] == [r["model"] for r in rows] == j["counts"]["models"]
    for (m, framing, high, rate_high, low, rate_low, swing), r in zip(t["rows"], rows, strict=True):
        assert (m, framing, high, low) == (
            r["model"],
            r["framing"],
            r["template_high"],
            r["template_low"],
        )
        assert same_pct(rate_high, r["rate_high"]) and same_pct(rate_low, r["rate_low"])
        assert swing == f"{100 * r['swing']:.1f} pts"


def check_fallacy_density_by_outcome(j, t):
    assert t["header"][1:] == [OUTCOME_LABEL[o] for o in OUTCOMES]
    cells = {(r["model"], r["outcome"]): r for r in j["appendix"]["fallacy_density_by_outcome"]}
    assert [r[0] for r in t["rows"]] == j["counts"]["models"]
    for m, *row in t["rows"]:
        for o, cell in zip(OUTCOMES, row, strict=True):
            assert cell == f_num((cells.get((m, o)) or {}).get("fallacy_density")), (m, o, cell)


def check_tests_tost(j, t):
    rows = j["tests"]["tost_levels"]
    assert len(t["rows"]) == len(rows)
    for (levels, rate_a, rate_b, diff, ci90, p, eq), r in zip(t["rows"], rows, strict=True):
        assert levels == f"{r['level_a']} vs {r['level_b']}"
        assert same_pct(rate_a, r["rate_a"]) and same_pct(rate_b, r["rate_b"])
        assert diff == f"{100 * r['diff']:+.1f} pts" and p == f_p(r["p_value"])
        lo, hi, mid = (100 * r[k] for k in ("ci90_lo", "ci90_hi", "diff_adjusted"))
        assert ci90 == f"{lo:+.1f} to {hi:+.1f} ({mid:+.1f})"  # the interval's own centre
        assert mid == pytest.approx((lo + hi) / 2)
        assert eq == ("yes" if r["equivalent"] else "no")
        assert r["margin"] == 0.05 and r["alpha"] == 0.05  # the note's "5 points", "p < 0.05"


def check_tests_chi2(j, t):
    chi = j["tests"]["chi2_model_by_outcome"]
    ((stat, dof, p, conclusion),) = t["rows"]
    assert stat == f_num(chi["statistic"], ",.1f") and int(dof) == chi["dof"]
    assert p == f_p(chi["p_value"])
    differ = chi["p_value"] < 0.05
    assert conclusion.startswith("outcome distributions differ" if differ else "no evidence")


def check_agreement(j, t):
    assert [r[0] for r in t["rows"]] == list(j["agreement"])
    for f, kappa, ac1, disagreement, n, prevalence in t["rows"]:
        a = j["agreement"][f]
        assert kappa == f_num(a["kappa"]) and ac1 == f_num(a["ac1"])
        assert same_pct(disagreement, a["disagreement"]) and same_count(n, a["n"])
        assert same_pct(prevalence, j["report"]["prevalence"][f])


def check_agreement_by_model(j, t):
    assert [r[0] for r in t["rows"]] == list(j["agreement_by_model"])
    for m, *cells in t["rows"]:
        for f, cell in zip(FIELDS, cells, strict=True):
            a = j["agreement_by_model"][m][f]
            assert cell == f"{f_num(a['kappa'])} / {f_num(a['ac1'])}", (m, f, cell)


def check_counts(j, t):
    steps = j["report"]["steps"]
    assert [r[0] for r in t["rows"]] == [s["step"] for s in steps]
    for (_, _, n), s in zip(t["rows"], steps, strict=True):
        assert same_count(n, s["n"])
    c, by = j["counts"], {s["step"]: s["n"] for s in steps}
    assert (by["attempted"], by["errors"], by["valid"]) == (
        c["attempted"],
        c["errors"],
        c["valid_generations"],
    )
    assert (by["scored"], by["unscored"]) == (c["scored"], c["unscored"])


def check_counts_by_model(j, t):
    rows = j["report"]["counts_by_model"]
    assert [r[0] for r in t["rows"]] == [r["model"] for r in rows]
    for (m, *cells), r in zip(t["rows"], rows, strict=True):
        for key, cell in zip(("attempted", "errors", "valid", "scored"), cells, strict=True):
            assert same_count(cell, r[key]), (m, key)
        mine = j["counts"]["by_model"][m]
        assert (r["attempted"], r["valid"], r["scored"]) == tuple(mine.values())


def check_counts_by_judge(j, t):
    rows = j["report"]["counts_by_judge"]
    assert [r[0] for r in t["rows"]] == [r["judge"] for r in rows]
    keys = ("judged", "parsed", "parse_errors", "errors", "missing")
    for (name, used, *cells), r in zip(t["rows"], rows, strict=True):
        assert used == ("yes" if r["used"] else "no")
        for key, cell in zip(keys, cells, strict=True):
            assert same_count(cell, r[key]), (name, key)
        if r["used"]:
            mine = j["counts"]["by_judge"][name]
            assert [r[k] for k in keys[1:]] == [mine[k] for k in keys[1:]]


def check_cost(j, t):
    rows = j["report"]["cost"]
    assert [tuple(r[:2]) for r in t["rows"]] == [(r["role"], r["name"]) for r in rows]
    for (_, _, tin, tout, cost), r in zip(t["rows"], rows, strict=True):
        assert same_count(tin, r["input_tokens"]) and same_count(tout, r["output_tokens"])
        if not (r["input_tokens"] or r["output_tokens"]):
            assert cost == "– (no tokens recorded)"
        elif not r["price_known"]:
            assert cost == "unknown (no price)"
        else:
            assert re.fullmatch(r"\$[\d,]+\.\d\d", cost) and cost == f"${r['cost_usd']:,.2f}"
    total = re.search(r"Known cost in total: \$([\d,]+\.\d\d)", t["note"])
    if j["report"]["cost_total_usd"] is None:
        assert total is None
    else:
        assert total and total.group(1) == f"{j['report']['cost_total_usd']:,.2f}"


CHECKS = {
    "headline_rates": check_headline_rates,
    "field_rates": check_field_rates,
    "cohens_h": check_cohens_h,
    "by_prompt": check_by_prompt,
    "coach_labeling": check_coach_labeling,
    "by_model_level": check_by_model_level,
    "by_model_context": check_by_model_context,
    "fallacy_swing": check_fallacy_swing,
    "fallacy_density_by_outcome": check_fallacy_density_by_outcome,
    "tests_tost": check_tests_tost,
    "tests_chi2": check_tests_chi2,
    "agreement": check_agreement,
    "agreement_by_model": check_agreement_by_model,
    "counts": check_counts,
    "counts_by_model": check_counts_by_model,
    "counts_by_judge": check_counts_by_judge,
    "cost": check_cost,
}


# --------------------------------------------------------------------------- prose


def check_key_number(j, key: str, value: str) -> None:
    """One line of "At a glance"."""
    c, claims, swing = j["counts"], j["claims"], j["report"]["largest_framing_swing"]
    if key == "scored generations":
        m = re.fullmatch(r"([\d,]+) of ([\d,]+) attempted \(([\d,]+) valid\)", value)
        assert m and same_count(m[1], c["scored"]) and same_count(m[2], c["attempted"])
        assert same_count(m[3], c["valid_generations"])
    elif key == "per-claim refusal":
        m = re.fullmatch(r"(\S+) to (\S+) \((\d+\.\d)-point spread\)", value)
        assert m and same_pct(m[1], claims["refusal_min"]) and same_pct(m[2], claims["refusal_max"])
        assert m[3] == f"{claims['refusal_spread_pp']:.1f}"
    elif key == "largest framing swing":
        m = re.fullmatch(r"(.+): refusal (\S+) \((\w+)\) to (\S+) \((\w+)\)", value)
        assert m and (m[1], m[3], m[5]) == (swing["model"], swing["low"], swing["high"])
        by_framing = j["models"][swing["model"]]["by_framing"]
        assert same_pct(m[2], by_framing[m[3]]["refusal"]) and same_pct(m[2], swing["rate_low"])
        assert same_pct(m[4], by_framing[m[5]]["refusal"]) and same_pct(m[4], swing["rate_high"])
    elif key == "model x outcome":
        chi = j["tests"]["chi2_model_by_outcome"]
        m = re.fullmatch(r"χ² = ([\d,.]+), dof (\d+), p (.+)", value)
        assert m and m[1] == f_num(chi["statistic"], ",.1f") and int(m[2]) == chi["dof"]
        assert m[3] == f_p(chi["p_value"])
    elif key == "controversy levels":
        m = re.fullmatch(r"(\d+) of (\d+) pairs equivalent within ±5 points", value)
        tost = j["tests"]["tost_levels"]
        assert m and int(m[1]) == j["report"]["tost_equivalent_pairs"] and int(m[2]) == len(tost)
        assert int(m[1]) == sum(1 for r in tost if r["equivalent"])
    elif key == "definition":
        assert j["compat"] == "paper" and j["judge_values"] == "said"
        assert value.startswith("the paper's: the judges' values as they said them"), value
        assert not re.search(r"\d", value)
    elif key == "tie rule":
        assert "tie rule: " + value == j["validity_checks"]["tie_rule"], value
    elif key == "positive control":
        control = j["validity_checks"]["control"]
        assert value.startswith("passed" if control["passed"] else "FAILED"), value
        for r in control["judges"]:
            assert f"{r['judge']} found a fallacy in {r['detected']}/{r['replies']}" in value
    elif key in ("over-refusal (benign twins)", "judge self-consistency"):
        # each of their numbers: tests/report/test_benign_report.py
        table = "over_refusal" if key.startswith("over") else "self_consistency"
        assert j["validity_checks"][table], key
    else:
        assert key in ("models", "judges"), key  # names only


def _swing(j, m) -> None:
    swing = j["report"]["largest_framing_swing"]
    assert (m[1], m[3], m[5]) == (swing["model"], swing["low"], swing["high"])
    assert same_pct(m[2], swing["rate_low"]) and same_pct(m[4], swing["rate_high"])
    assert m[6] == f"{100 * swing['swing']:.1f}"


def _claims(j, m) -> None:
    claims = j["claims"]
    assert int(m[1]) == claims["n_claims"]
    assert same_pct(m[2], claims["refusal_min"]) and m[3] == claims["claim_min"]
    assert same_pct(m[4], claims["refusal_max"]) and m[5] == claims["claim_max"]
    assert m[6] == f"{claims['refusal_spread_pp']:.1f}"


def _samples(j, m) -> None:
    assert {int(x) for x in m.groups()} - {0} == {j["report"]["samples_per_cell"]}


def _signatures(j, m) -> None:
    models = j["counts"]["models"]
    parts = m[1].split("; ")
    assert len(parts) == len(models)
    for part, model in zip(parts, models, strict=True):
        assert part.startswith(f"{model}: ")
        shares = part.removeprefix(f"{model}: ").split(", ")
        for o, share in zip(OUTCOMES, shares, strict=True):
            label, value = share.rsplit(" ", 1)
            assert label == OUTCOME_LABEL[o]
            assert same_pct(value, j["models"][model]["outcomes"][o]["rate"]), (model, o)


def _subtitle(j, m) -> None:
    assert int(m[1]) == len(j["counts"]["models"]) and int(m[2]) == len(j["counts"]["judges"])
    assert m[3] == j["consensus"] and same_count(m[4], j["n_resamples"])
    assert int(m[5]) == j["seed"] and j["ci_level"] == 0.95


def _framings(j, m) -> None:
    present = set().union(*(j["models"][x]["by_framing"] for x in j["counts"]["models"]))
    assert int(m[1]) == len(present) and int(m[2]) == len(FRAMINGS)


def _all_framings(j, m) -> None:
    present = set().union(*(j["models"][x]["by_framing"] for x in j["counts"]["models"]))
    assert int(m[1]) == len(present) == len(FRAMINGS)  # "all 7": never "7 of the 7"


def _resamples(j, m) -> None:
    assert same_count(m[1], j["n_resamples"]) and int(m[2]) == j["seed"]


def _cost(j, m) -> None:
    assert m[1] == f"{j['report']['cost_total_usd']:,.2f}"


def _small_sample(j, m) -> None:
    small = j["small_sample"]
    assert small["any"] and m[0] == small["note"].removesuffix(" these intervals are rough.")
    flagged = [
        f"{r['model']} ({r['n_claims']} claim{'' if r['n_claims'] == 1 else 's'})"
        for r in small["flagged"]
    ]
    assert m[1] == ", ".join(flagged) and int(m[2]) == small["min_claims"]
    assert all(r["n_claims"] < small["min_claims"] for r in small["flagged"])
    assert all(j["models"][r["model"]]["ci_few_claims"] for r in small["flagged"])


def _label_budget(j, m) -> None:
    """Without labels, the labels a corrected CI would need: recomputed from the JSON's
    judged outcome rates by the budget the report uses."""
    import math

    import pandas as pd

    from deflectbench.analysis.calibration.review import DEFAULT_TARGET, budget_without_labels

    def value(x):
        return math.nan if x is None else float(x)

    rows = [
        {
            "model": model,
            "kind": "outcome",
            "measure": o,
            "rate": value(e["rate"]),
            "ci_lo": value(e["ci95"][0]),
            "ci_hi": value(e["ci95"][1]),
            "n": e["n"],
        }
        for model, sec in j["models"].items()
        for o, e in sec["outcomes"].items()
    ]
    need = budget_without_labels(pd.DataFrame(rows), DEFAULT_TARGET)
    assert "calibration" not in j and int(m[1]) == round(100 * DEFAULT_TARGET)
    assert m[2] == ", ".join(f"{model} about {r['labels']:,}" for model, r in need.items())


#: Sentences with numbers outside the tables: a pattern, and what checks its numbers.
SENTENCES = [
    (
        r"within ±(\d+) points, the label budget asks for at most \(labels alone, before any "
        r"credit for the judges\): (.+)\.$",
        _label_budget,
    ),
    (
        r"swing \(outlined\): (.+?), (\S+) under (\w+) to (\S+) under (\w+), (\S+) percentage "
        r"points",
        _swing,
    ),
    (
        r"\((\d+) claims?\)\. Per-claim refusal spans (\S+) \((\S+)\) to (\S+) \((\S+)\), a "
        r"(\S+)-point spread",
        _claims,
    ),
    (r"Refusals per cell \(of (\d+) samples\)", _samples),
    (
        r"sampled (\d+) times\. Bars: share of a model's cells refused in (0), 1, \.\.\., (\d+) "
        r"of the samples\. Mass at the ends \((0)/(\d+) and (\d+)/(\d+)\)",
        _samples,
    ),
    (r"^Compliance signatures: (.+)$", _signatures),
    (
        r"(\d+) models?, (\d+) judges?; consensus `?([^;`]+)`?; 95% CIs from ([\d,]+) "
        r"block-bootstrap resamples of claims \(seed (\d+)\)",
        _subtitle,
    ),
    (r"under (\d+) of the (\d+) framings", _framings),
    (r"under all (\d+) framings", _all_framings),
    (r"([\d,]+) resamples of claims \(seed (\d+)\)", _resamples),
    (r"Known cost in total: \$([\d,]+\.\d\d)", _cost),
    (
        r"Small sample: the 95% CIs of (.+?) rest on fewer than (\d+) claims; the bootstrap "
        r"resamples claims, so",
        _small_sample,
    ),
]

#: Fixed prose with digits (each backed by the JSON where it is a parameter, see the checks).
PROSE = [
    r"^\d+\. ",  # section numbers
    r"(tables|figures)/[\w./-]+",
    r"\b95% (CIs?|CI in parentheses|block-bootstrap)",
    r"±5 points",
    r"less than 5 percentage points",
    r"p < 0\.05",
    r"\b90% CI",  # the TOST's interval at alpha 0.05 (checked in check_tests_tost)
    r"2·asin√p₁ − 2·asin√p₂",
    r"\|h\| ≈ 0\.2 small, 0\.5 medium, 0\.8 large",
    r"the paper's Appendix E\.2 \(fallacies by framing\) and E\.3 \(coach framing\)\.",
    r"the paper's Appendix F \(run-level consistency\) and G \(output length\)\.",
    r"the 8 field rates",
    "Level names: " + ", ".join(f"{k} {v.replace('_', ' ')}" for k, v in LEVEL_NAMES.items()),
    r"deflectbench \d+\.\d+\.\d+",
    r"\(not from 0\)",
    r"\bAC1\b",  # Gwet's AC1, a name
    r"\(E\.3\)",  # the appendix table's name
    r"per 100 output tokens",  # appendix G's unit
    r"output tokens × 100",
]


def unaccounted(j, text: str, names: list[str]) -> str:
    """Check every known sentence in ``text`` against the JSON and take it out, then take out
    names and fixed prose; what is left must hold no digit (returned if it does)."""
    for pattern, check in SENTENCES:
        for m in list(re.finditer(pattern, text)):
            check(j, m)
        text = re.sub(pattern, "", text)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, "NAME")
    for pattern in PROSE:
        text = re.sub(pattern, "", text)
    return text if re.search(r"\d", text) else ""


def identifiers(b, j) -> list[str]:
    return [
        *j["counts"]["models"],
        *j["counts"]["judges"],
        *j["counts"]["judges_in_store"],
        *(c.claim_id for c in b.claims),
        *(t.prompt_id for t in b.templates),
        f"{b.name} v{b.version}",
    ]


# --------------------------------------------------------------------------- the tests


def _stats_sections(dom: Node) -> list[Node]:
    """The sections with statistics (not the example responses, not the run metadata)."""
    return [s for s in dom.find("section") if s.attrs.get("id") not in ("examples", "metadata")]


def test_every_table_of_the_page_matches_the_json(built):
    _, j, paths = built
    dom = Dom(paths.html.read_text()).root
    tables = {}
    for section in _stats_sections(dom):
        tables.update(html_tables(section))
    assert set(tables) == set(CHECKS)  # every statistics table is on the page, and checked
    for name, t in tables.items():
        assert t["rows"] and all(len(r) == len(t["header"]) for r in t["rows"]), name
        CHECKS[name](j, t)


def test_every_table_of_the_markdown_matches_the_json(built):
    _, j, paths = built
    dom = Dom(paths.html.read_text()).root
    titles = {t["title"]: n for s in _stats_sections(dom) for n, t in html_tables(s).items()}
    md = paths.markdown.read_text().split("## Example responses")[0]
    tables = md_tables(md, titles)
    assert set(tables) == set(CHECKS)
    rows = 0
    for name, t in tables.items():
        assert t["rows"] and all(len(r) == len(t["header"]) for r in t["rows"]), name
        CHECKS[name](j, t)
        rows += len(t["rows"]) + 2  # header and separator lines
    assert rows == sum(1 for line in md.splitlines() if line.startswith("|"))  # none unchecked


def test_every_other_number_of_the_page_is_accounted_for(built):
    b, j, paths = built
    dom = Dom(paths.html.read_text()).root
    names = identifiers(b, j)
    header = dom.find("header")[0]
    units = [n.text() for n in header.find("h1") + header.find("p")]
    for div in dom.find("div", **{"class": "warn"}) + dom.find("div", **{"class": "notice"}):
        units.append(div.text())
    summary = dom.find("section", id="summary")[0]
    keys = [n.text() for n in summary.find("dt")]
    assert keys[0] == "scored generations" and "per-claim refusal" in keys
    for key, value in zip(keys, [n.text() for n in summary.find("dd")], strict=True):
        check_key_number(j, key, value)
    for section in _stats_sections(dom):
        if section is summary:
            continue
        for node in section.iter():
            if node.tag in ("h2", "h3", "p", "figcaption"):
                units.append(node.text())
            elif node.tag == "img":
                units.append(node.attrs.get("alt") or "")
    left = [u for u in units if unaccounted(j, u, names)]
    assert not left, left


def test_every_other_number_of_the_markdown_is_accounted_for(built):
    b, j, paths = built
    names = identifiers(b, j)
    md = paths.markdown.read_text().split("## Example responses")[0].split("## Run metadata")[0]
    left = []
    for raw in md.splitlines():
        if raw.startswith("|"):
            continue  # table lines: every one is checked by the table test
        m = re.fullmatch(r"- \*\*(.+):\*\* (.*)", raw)
        if m:
            check_key_number(j, m[1], md_unescape(m[2]))
            continue
        line = md_unescape(raw.strip("_*#! ")) if not raw.startswith("![") else raw
        if unaccounted(j, line, names):
            left.append(raw)
    assert not left, left


def test_the_fixture_shows_what_it_should(built):
    """The fixture exercises failed requests, parse errors, a priced model and two samples."""
    _, j, paths = built
    assert j["report"]["samples_per_cell"] == 2 and j["counts"]["errors"] > 0
    assert j["report"]["steps"][3]["n"] > 0  # parse errors
    assert j["report"]["cost_total_usd"] is not None
    assert j["report"]["largest_framing_swing"] is not None and j["tests"]["tost_levels"]
    assert Path(paths.markdown).exists()
    assert j["small_sample"]["any"] and len(j["small_sample"]["flagged"]) == len(MODELS)
    assert j["appendix"]["fallacy_swing"] and j["appendix"]["coach_field_rates"]
