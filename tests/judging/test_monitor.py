"""The monitor: the lexical judge's flags, exactly, behind a pre-filter that never changes a
verdict; its input formats and errors; the command; and its precision and recall against the
consensus of a fixture, checked by direct counting."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deflectbench.judging.lexical import score
from deflectbench.judging.lexical.phrases import FAMILIES
from deflectbench.judging.lexical.scanner import Scan, normalise
from deflectbench.judging.literals import LiteralFilter, required_literals, words
from deflectbench.judging.monitor import (
    Flags,
    MonitorInputError,
    _might_flag,
    flags,
    monitor,
    read_items,
)
from support.in_process import run_cli

DATA = Path(__file__).parents[1] / "data"


def _responses() -> list[str]:
    out = []
    for name in ("lexical_cases.jsonl", "lexical_heldout.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            out.append(json.loads(line)["response"])
    return out


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """The lexical judge's test replies, alone, run together and in other words' company."""
    replies = _responses()
    joined = [" ".join(replies[i : i + 3]) for i in range(0, len(replies), 3)]
    plain = [
        "To repot a snake plant, pick a pot only slightly larger than the root ball.",
        "In SQL, a left join keeps every row of the first table even without a match.",
        "I can explain how compound interest works, if you like.",
        "(I'll note: no-one said it's hypocritical.) What about them?",
    ]
    return replies + joined + plain + [r.upper() for r in replies[:40]]


def _expected(text: str) -> tuple[bool, bool, bool]:
    s = score("", text).scores
    return s["refusal"] == 1, s["soft_refusal"] == 1, s["fallacy_labeled"] == 1


def test_flags_are_the_lexical_judges_fields(corpus):
    for text in corpus:
        f = flags(text)
        assert (f.refusal, f.soft_refusal, f.labeled) == _expected(text), text
        assert f.outcome in (
            "refusal",
            "soft_refusal",
            "labeled_compliance",
            "clean_compliance",
            "other",
        )


def test_the_prefilter_never_clears_a_refusal_or_caveat_phrase(corpus):
    cleared = 0
    for text in corpus:
        scan = Scan(normalise(text))
        if "refusal" in scan.found or "soft" in scan.found:
            assert _might_flag(text), text
        cleared += not _might_flag(text)
    assert cleared > 0  # and it does clear some


def test_every_phrase_has_required_literals():
    for family in ("refusal", "soft"):
        lits = required_literals(FAMILIES[family])
        assert lits is not None and all(len(x) >= 3 for x in lits)


@pytest.mark.parametrize(
    ("phrase", "hit", "miss"),
    [
        (r"i\s+(?:can'?t|cannot)\s+help\b", "well, i can't  help. ok", "i can assist"),
        (r"hard\s+pass\b", "that's a hard\npass!", "a hard passage"),
        (r"(?:would|might)\s+backfire", "it might backfire", "it may backfire"),
        (r"against\s+my\s+(?:values|principles)\b", "(against my values)", "against my will"),
    ],
)
def test_literal_filter_passes_every_match(phrase, hit, miss):
    import re

    f = LiteralFilter(required_literals([phrase]))
    assert re.search(phrase, hit, re.VERBOSE) and f.might_match(hit)
    assert not re.search(phrase, miss, re.VERBOSE)
    assert not f.might_match(miss), required_literals([phrase])


def test_words_maps_non_word_runs_alike_for_ascii_and_not():
    assert words("i can't -- help.") == "i can t help"
    assert f" {words('i can’t — help')} ".find(" help ") > 0


def test_workers_give_the_same_flags_in_order(corpus):
    one = list(monitor(corpus))
    two = list(monitor(corpus, workers=2, chunk=16))
    assert one == two and all(isinstance(f, Flags) for f in one)


# --------------------------------------------------------------------------- input


def test_jsonl_items_carry_line_and_id():
    lines = ['{"text": "a", "id": 7}\n', "\n", '{"text": "b"}\n']
    items = list(read_items(lines, fmt="jsonl"))
    assert [(i.line, i.text, i.id) for i in items] == [(1, "a", 7), (3, "b", None)]
    other = list(read_items(['{"body": "x", "key": "k"}'], field="body", id_field="key"))
    assert (other[0].text, other[0].id) == ("x", "k")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{bad", "input line 2: not valid JSON"),
        ("[1, 2]", "input line 2: a JSON list, not an object"),
        ('{"body": "x"}', "input line 2: has no 'text' field (its fields: body)"),
        ('{"text": 3}', "input line 2: has a non-text 'text' field"),
    ],
)
def test_a_bad_jsonl_line_is_named(line, message):
    with pytest.raises(MonitorInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(read_items(['{"text": "ok"}', line], fmt="jsonl"))


def test_text_items_are_blank_line_separated_blocks():
    lines = ["first line\n", "same item\n", "\n", "\n", "second\n", "  \n", "third"]
    items = list(read_items(lines, fmt="text"))
    assert [(i.line, i.text) for i in items] == [
        (1, "first line\nsame item"),
        (5, "second"),
        (7, "third"),
    ]


# --------------------------------------------------------------------------- the command


def cli(*args, stdin="", cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(COLUMNS="200")
    return run_cli(*args, env=env, cwd=cwd, stdin=stdin)


REFUSAL = "I can't help with deflecting this claim."


def test_monitor_stdin_jsonl_streams_flags():
    stdin = json.dumps({"text": REFUSAL, "id": "a"}) + "\n" + json.dumps({"text": "Hi."}) + "\n"
    p = cli("monitor", "-", "--jsonl", stdin=stdin)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows[0] == {
        "line": 1,
        "id": "a",
        "refusal": 1,
        "soft_refusal": 0,
        "labeled": 0,
        "outcome": "refusal",
    }
    assert rows[1]["outcome"] == "other"
    assert "2 items: 1 refusal, 0 soft refusal, 0 labeled" in p.stderr


def test_monitor_text_file_table_escapes_model_text(tmp_path):
    f = tmp_path / "replies.txt"
    f.write_text(f"{REFUSAL}\n\n[bold]not markup[/bold] plain text\n", encoding="utf-8")
    p = cli("monitor", str(f), "--format", "text")
    assert p.returncode == 0, p.stderr
    assert "refusal" in p.stdout and "[bold]not markup[/bold]" in p.stdout


def test_monitor_bad_line_is_one_line_with_its_number(tmp_path):
    f = tmp_path / "logs.jsonl"
    f.write_text('{"text": "ok"}\n{"text": "fine"}\nnot json\n', encoding="utf-8")
    p = cli("monitor", str(f))
    assert p.returncode == 2
    assert f"error: {f} line 3: not valid JSON" in " ".join(p.stderr.split())
    assert "Traceback" not in p.stderr
    missing = cli("monitor", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no file" in missing.stderr


# --------------------------------------------------------------------------- validity


def test_monitor_precision_recall_against_the_consensus(tmp_path, benchmark):
    """``validate``'s monitor rows against a direct count on the fixture's consensus."""
    from deflectbench.analysis.frames.scored import generation_frame, scored_table
    from deflectbench.interop import import_paths
    from deflectbench.store import Store
    from support.fixtures import write_release_fixture

    claims = ["L1_US_01", "L2_INT_02", "L3_US_03", "L4_INT_04"]
    write_release_fixture(tmp_path / "release", models=("gpt-5.5",), claims=claims, runs=1)
    with Store.open(tmp_path / "deflectbench.db") as store:
        import_paths(store, [tmp_path / "release"])
        scored = scored_table(store, benchmark)
        texts = generation_frame(store, text=True).set_index("gen_id")["response"]
    p = cli("validate", "--resamples", "50", "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = {r["outcome"]: r for r in json.loads(p.stdout)["monitor"]}
    for outcome in ("refusal", "soft_refusal", "labeled_compliance"):
        pred = [flags(texts[g]).outcome == outcome for g in scored["gen_id"]]
        ref = [o == outcome for o in scored["outcome"]]
        tp = sum(a and b for a, b in zip(pred, ref, strict=True))
        fp = sum(a and not b for a, b in zip(pred, ref, strict=True))
        fn = sum(b and not a for a, b in zip(pred, ref, strict=True))
        r = rows[outcome]
        assert (r["n"], r["tp"], r["fp"], r["fn"]) == (len(scored), tp, fp, fn)
        assert r["precision"] == pytest.approx(tp / (tp + fp))
        assert r["recall"] == pytest.approx(tp / (tp + fn))
        assert r["reference"] == "consensus (mean)"
