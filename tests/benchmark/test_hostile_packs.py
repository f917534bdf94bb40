"""Hostile packs (issue 22): templates are parsed as ``str.format`` parses them, not searched
for substrings; numbers are bounded like their flags; ids are printable and visible."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from deflectbench.benchmark import BenchmarkError
from deflectbench.benchmark.loader import parse_benchmark

PAPER = json.loads(
    resources.files("deflectbench.benchmark").joinpath("data/deflectbench-v1.json").read_bytes()
)
MULTITURN = json.loads(
    resources.files("deflectbench.benchmark")
    .joinpath("data/deflectbench-v1-multiturn.json")
    .read_bytes()
)


def small(**top) -> dict:
    d = copy.deepcopy(PAPER)
    d["claims"], d["templates"], d["pack"] = d["claims"][:2], d["templates"][:2], "tiny"
    d.update(top)
    return d


def refused(data: dict, *words: str) -> str:
    with pytest.raises(BenchmarkError) as exc:
        parse_benchmark(data, pack="tiny")
    message = "\n".join(getattr(exc.value, "problems", [str(exc.value)]))
    for w in words:
        assert w in message, message
    return message


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("As {speaker}, argue that {{claim}}.", ("never shows the claim",)),
        ("Argue {claim:>300000000}.", ("format spec",)),
        ("Argue {claim:{speaker[0]}}.", ("format spec",)),
        ("Argue {claim!r}.", ("conversion",)),
        ("Argue {speaker[0]} {claim}.", ("not a plain name",)),
        ("Argue {speaker.upper} {claim}.", ("not a plain name",)),
        ("Argue {} {claim}.", ("not a plain name",)),
        ("Argue {0} {claim}.", ("not a plain name",)),
    ],
)
def test_a_template_is_parsed_not_searched(template, words):
    d = small()
    d["templates"][0]["template"] = template
    refused(d, "templates[0]", *words)


def test_an_escaped_claim_beside_the_real_one_is_fine():
    d = small()
    d["templates"][0]["template"] = "Write {{claim}} literally, then: {claim}"
    b = parse_benchmark(d, pack="tiny")
    c, t = b.claims[0], b.templates[0]
    assert b.render(c.claim_id, t.prompt_id) == f"Write {{claim}} literally, then: {c.text}"


@pytest.mark.parametrize(
    ("judge_template", "words"),
    [
        ("Claim: {claim}\nReply: {response:.0}", ("format spec",)),
        ("Claim: {claim}\nReply: {{response}}", ("missing placeholder {response}",)),
        ("Claim: {claim}\nReply: {response}\nBy: {speaker}", ("unknown placeholder {speaker}",)),
    ],
)
def test_the_judge_template_shows_the_claim_and_the_reply(judge_template, words):
    d = small()
    d["judge"]["user_template"] = judge_template
    refused(d, "judge.user_template", *words)


def test_a_followup_with_a_nested_spec_is_refused_before_a_run():
    d = copy.deepcopy(MULTITURN)
    d["followups"][0]["text"] = "Now: {claim:{speaker[0]}}"
    refused(d, "followups[0]", "format spec")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("generation_temperature", float("nan")),
        ("generation_temperature", 1e9),
        ("generation_temperature", -0.5),
        ("judge_temperature", float("inf")),
        ("runs_per_cell", 0),
        ("runs_per_cell", 1.5),
        ("runs_per_cell", 10**6),
        ("runs_per_cell", True),
    ],
)
def test_a_packs_numbers_are_bounded_like_their_flags(key, value):
    refused(small(**{key: value}), key)


@pytest.mark.parametrize("where", ["claims", "templates"])
def test_ids_differing_by_an_invisible_character_are_refused(where):
    d = small()
    key = "claim_id" if where == "claims" else "prompt_id"
    d[where][1][key] = d[where][0][key] + "\u200b"
    refused(d, f"{where}[1]", "invisible", "U+200B")


# -- an edited pack under the same id ---------------------------------------------------------


def test_answers_made_with_other_content_of_the_pack_are_refused_or_flagged(tmp_path):
    from dataclasses import replace

    from deflectbench.analysis import AnalysisOptions
    from deflectbench.analysis.summary.build import summarize
    from deflectbench.benchmark import default_benchmark
    from deflectbench.conditions import Settings
    from deflectbench.errors import ConfigError
    from deflectbench.store import Store
    from support.report_store import make_store

    b = default_benchmark()
    db = make_store(tmp_path / "s.db", b)
    with Store.open(db) as store:  # the answers' conditions, made with this content
        made = Settings(1.0, 256, 0, b.sha256)
        for model in {r["model"] for r in store.generation_rows(columns=["model"])}:
            store.register_condition(model, made, "made-with-v1")
        store.conn.execute("UPDATE generations SET condition = 'made-with-v1'")
    edited = copy.deepcopy(PAPER)
    edited["claims"][0]["level"] = 4 if edited["claims"][0]["level"] != 4 else 1
    other = parse_benchmark(edited, sha256="e" * 64, pack=b.pack)
    assert other.key == b.key and other.sha256 != b.sha256
    options = AnalysisOptions(n_resamples=50)
    with Store.open(db) as store:
        assert summarize(store, b, options).notes == ()
        with pytest.raises(ConfigError, match="other content of pack deflectbench-v1"):
            summarize(store, other, options)
        flagged = summarize(store, other, replace(options, allow_pack_change=True))
    assert any("other content of pack" in n for n in flagged.notes)
