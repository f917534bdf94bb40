"""Benchmark packs: the shipped packs, the file format's validation (good and broken packs, every
problem with its location), pack identity, and the controlled pack's one change against v1."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from importlib import resources

import pytest

from deflectbench.benchmark import (
    PAPER_PACK,
    BenchmarkError,
    default_benchmark,
    load_pack,
    pack_infos,
    resolve_benchmark,
    shipped_packs,
)
from deflectbench.benchmark.loader import parse_benchmark
from deflectbench.conditions import Settings
from deflectbench.vocab import OUTCOMES
from support.in_process import run_cli

V1_CLOSING = "The claim: {claim}"
SPEAKER_CLOSING = "Your debate opponent {speaker} claims: {claim}"


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "200"
    return run_cli(*args, env=env)


def data_file(name: str) -> bytes:
    return resources.files("deflectbench.benchmark").joinpath(f"data/{name}.json").read_bytes()


def v1_data() -> dict:
    return json.loads(data_file(PAPER_PACK))


def small_pack(**top) -> dict:
    """A valid pack of 2 claims and 2 templates, not the paper's (so not held to 80 x 15)."""
    d = v1_data()
    d["claims"] = d["claims"][:2]
    d["templates"] = d["templates"][:2]
    d["pack"] = "tiny"
    d.update(top)
    return d


# -- the shipped packs ------------------------------------------------------------------------


def test_the_paper_pack_is_the_default_and_keeps_its_key():
    b = default_benchmark()
    assert b.pack == PAPER_PACK == shipped_packs()[0]
    assert b.key == "deflectbench-v1.0"
    assert (b.language, b.turns, b.based_on, b.followups) == ("en", 1, None, ())
    assert resolve_benchmark(None) is b and resolve_benchmark("deflectbench-v1") is b


@pytest.mark.parametrize("name", shipped_packs())
def test_every_shipped_pack_loads_and_renders_every_prompt(name):
    b = load_pack(name)
    assert b.pack == name
    prompts = b.prompts()
    assert len(prompts) == len(b.claims) * len(b.templates) > 0
    text = {c.claim_id: c.text for c in b.claims}
    for claim_id, _prompt_id, prompt in prompts:
        assert "{" not in prompt and "}" not in prompt
        assert text[claim_id] in prompt
    for f in b.followups:
        rendered = b.render_followup(f, b.claims[0].claim_id, b.templates[0].prompt_id)
        assert "{" not in rendered and "}" not in rendered


def test_shipped_packs_have_distinct_keys_and_hashes():
    infos = pack_infos()
    assert all(i.problem is None for i in infos), [i.problem for i in infos]
    assert len({i.key for i in infos}) == len(infos)
    assert len({i.sha256 for i in infos}) == len(infos)
    for i in infos:
        if i.name != PAPER_PACK:
            assert i.key == f"{i.name}-v1.0"
    assert {"deflectbench-v1", "deflectbench-v1-controlled"} <= {i.name for i in infos}


def test_spec_list_names_every_pack_with_language_turns_and_counts():
    p = cli("spec", "--list", "--json")
    assert p.returncode == 0, p.stderr
    rows = {r["name"]: r for r in json.loads(p.stdout)}
    assert list(rows) == list(shipped_packs())
    v1 = rows["deflectbench-v1"]
    assert (v1["language"], v1["turns"], v1["claims"], v1["templates"]) == ("en", 1, 80, 15)
    assert rows["deflectbench-v1-controlled"]["templates"] == 15
    p = cli("spec", "--list")
    assert p.returncode == 0, p.stderr
    for name in shipped_packs():
        assert name in p.stdout
    for header in ("pack", "language", "turns", "claims", "templates"):
        assert header in p.stdout


# -- the controlled pack -------------------------------------------------------------------------


def test_controlled_pack_names_the_speaker_in_every_template_and_changes_nothing_else():
    v1, ctl = default_benchmark(), load_pack("deflectbench-v1-controlled")
    assert ctl.based_on == PAPER_PACK and ctl.language == "en" and ctl.turns == 1
    assert ctl.claims == v1.claims and ctl.fallacies == v1.fallacies
    assert ctl.rubric == v1.rubric and ctl.speaker == v1.speaker
    assert ctl.all_definitions_format == v1.all_definitions_format
    assert [t.prompt_id for t in ctl.templates] == [t.prompt_id for t in v1.templates]
    changed = []
    for old, new in zip(v1.templates, ctl.templates, strict=True):
        assert new.template.endswith(SPEAKER_CLOSING)
        assert (old.framing, old.fallacy, old.explicitness) == (
            new.framing,
            new.fallacy,
            new.explicitness,
        )
        if old.template != new.template:
            changed.append(old.prompt_id)
            assert old.fallacy in ("whataboutism", "red_herring")
            assert old.template.removesuffix(V1_CLOSING) == new.template.removesuffix(
                SPEAKER_CLOSING
            )
    assert len(changed) == 8
    for claim_id, _pid, prompt in ctl.prompts():
        assert f"Your debate opponent Jordan Ivanov claims: {ctl.claim(claim_id).text}" in prompt


# -- the format: good packs ----------------------------------------------------------------------


def test_a_small_pack_is_not_held_to_the_papers_counts(tmp_path):
    path = tmp_path / "whatever.json"
    path.write_text(json.dumps(small_pack(language="pt-BR", based_on=PAPER_PACK)))
    b = resolve_benchmark(str(path))
    assert (b.pack, b.language, b.based_on, len(b.claims), len(b.templates)) == (
        "tiny",
        "pt-BR",
        PAPER_PACK,
        2,
        2,
    )
    assert b.key == "tiny-v1.0"
    d = small_pack()
    del d["pack"]
    path = tmp_path / "my-pack.json"
    path.write_text(json.dumps(d))
    assert resolve_benchmark(str(path)).pack == "my-pack"  # the file's stem
    path = tmp_path / "My Pack (v2).json"
    path.write_text(json.dumps(d))
    assert resolve_benchmark(str(path)).key == "my-pack-v2-v1.0"  # the stem, made an id


def test_followups_of_a_two_turn_pack():
    d = small_pack(
        turns=2,
        followups=[
            {"followup_id": "push", "after": "refusal", "text": "Please, about {claim}."},
            {"followup_id": "strip", "after": "labeled_compliance", "text": "No label, {speaker}."},
        ],
    )
    b = parse_benchmark(d)
    assert b.turns == 2
    assert b.followup_for("refusal").followup_id == "push"
    assert b.followup_for("clean_compliance") is None
    c, t = b.claims[0], b.templates[0]
    assert b.render_followup(b.followup_for("refusal"), c.claim_id, t.prompt_id) == (
        f"Please, about {c.text}."
    )
    assert set(OUTCOMES) >= {f.after for f in b.followups}


# -- the format: broken packs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["templates"][1].update(template="Say {claim} to {speakr}"),
            "templates[1] 'explicit_direct_RH': unknown placeholder {speakr} "
            "(did you mean {speaker}?)",
        ),
        (
            lambda d: d["templates"][0].update(framing="politcal"),
            "templates[0] 'explicit_direct_WA': framing 'politcal' is not one of direct, "
            "political, coach, manipulation, choose, implicit_neutral, implicit_political "
            "(did you mean 'political'?)",
        ),
        (
            lambda d: d["templates"][0].update(fallacy="whataboutsm"),
            "(did you mean 'whataboutism'?)",
        ),
        (lambda d: d["claims"][1].update(level=9), "claims[1] 'L1_INT_02': level must be 1-4"),
        (lambda d: d["claims"].append(copy.deepcopy(d["claims"][0])), "duplicate claim_id"),
        (lambda d: d["judge"].update(fields=["refusal"]), "judge.fields must be the rubric's"),
        (lambda d: d.update(language="español"), "language must be a BCP 47 tag"),
        (lambda d: d.update(turns=3), "turns must be 1 or 2"),
        (lambda d: d.update(turns=2), "turns is 2, so 'followups' (a list) is required"),
        (
            lambda d: d.update(followups=[{"followup_id": "x", "after": "refusal", "text": "t"}]),
            "'followups' is given but turns is 1",
        ),
        (
            lambda d: d.update(
                turns=2, followups=[{"followup_id": "x", "after": "refused", "text": "t {claim}"}]
            ),
            "followups[0] 'x': after 'refused' is not one of refusal, soft_refusal, "
            "labeled_compliance, clean_compliance, other",
        ),
        (
            lambda d: d.update(
                turns=2, followups=[{"followup_id": "x", "after": "refusal", "text": "{clam}"}]
            ),
            "followups[0] 'x': unknown placeholder {clam} (did you mean {claim}?)",
        ),
        (
            lambda d: d.update(
                turns=2,
                followups=[
                    {"followup_id": "x", "after": "refusal", "text": "a"},
                    {"followup_id": "y", "after": "refusal", "text": "b"},
                ],
            ),
            "duplicate followup for outcome 'refusal'",
        ),
        (lambda d: d.update(pack="Not An Id"), "pack must be an id"),
        (lambda d: d.update(templates=[]), "at least one claim and one template"),
    ],
)
def test_a_broken_pack_names_the_problem_and_its_location(mutate, message):
    d = small_pack()
    mutate(d)
    with pytest.raises(BenchmarkError) as exc:
        parse_benchmark(d)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_every_problem_is_listed_with_the_file_and_its_location(tmp_path):
    d = small_pack()
    d["templates"][0]["template"] += " {speakr}"
    d["claims"][1]["context"] = "eu"
    d["judge"]["fields"] = d["judge"]["fields"][:7]
    path = tmp_path / "foo.json"
    path.write_text(json.dumps(d))
    with pytest.raises(BenchmarkError) as exc:
        resolve_benchmark(str(path))
    assert len(exc.value.problems) == 3
    assert all(p.startswith(f"{path}: ") for p in exc.value.problems)
    assert "(and 2 more problems" in str(exc.value)
    p = cli("spec", "--benchmark", str(path))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines[0] == (
        f"error: {path}: claims[1] 'L1_INT_02': context must be 'us' or 'international', got 'eu'"
    )
    assert lines[1] == (
        f"error: {path}: templates[0] 'explicit_direct_WA': unknown placeholder {{speakr}} "
        "(did you mean {speaker}?)"
    )
    assert lines[2].startswith(f"error: {path}: judge.fields must be")
    assert lines[3] == f"3 problems in --benchmark {path}; the format is in docs/packs.md"


@pytest.mark.parametrize("command", ["run", "analyze", "report", "status", "judge", "export"])
def test_every_command_refuses_an_unknown_pack_in_one_line(command, tmp_path):
    args = ["--db", str(tmp_path / "x.db")] + (
        ["--out", str(tmp_path)] if command == "export" else []
    )
    p = cli(command, "--benchmark", "deflectbench-v1-controled", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    if command not in ("status", "analyze", "report", "export"):  # those need a store first
        assert "did you mean 'deflectbench-v1-controlled'?" in line


def test_a_file_may_not_take_a_shipped_packs_id_with_other_content(tmp_path):
    d = v1_data()
    d["claims"][0]["text"] = "Something else entirely."
    path = tmp_path / "deflectbench-v1.json"  # the stem is the shipped pack's id
    path.write_text(json.dumps(d))
    with pytest.raises(BenchmarkError, match="is a shipped pack's, but the content differs"):
        resolve_benchmark(str(path))
    same = tmp_path / "copy.json"
    same.write_bytes(data_file("deflectbench-v1-controlled"))
    assert resolve_benchmark(str(same)) is load_pack("deflectbench-v1-controlled")


def test_unknown_name_suggests_the_closest_pack():
    with pytest.raises(BenchmarkError) as exc:
        resolve_benchmark("deflectbench-v1-controled")
    assert "did you mean 'deflectbench-v1-controlled'?" in str(exc.value)
    assert "deflectbench spec --list" in str(exc.value)


# -- identity ------------------------------------------------------------------------------------


def test_one_model_on_two_packs_gets_two_condition_labels():
    base = {"temperature": 1.0, "max_tokens": 256, "seed": 0}
    v1 = Settings(**base, benchmark_sha256=default_benchmark().sha256)
    es = Settings(**base, benchmark_sha256="b" * 64, pack="deflectbench-v1-es")
    assert v1.label() == "temp1-max256-seed0"  # the paper's label is unchanged
    assert es.label() == "temp1-max256-seed0-deflectbench-v1-es"
    assert "pack" not in es.as_json()  # the content is in the settings through its sha256
    long = Settings(**base, benchmark_sha256="c" * 64, pack="x" * 80)
    assert len(long.label()) == 64


def test_a_run_files_benchmark_is_a_name_or_a_path_beside_the_run_file(tmp_path):
    from deflectbench.cli.options import run_file_benchmark

    config = tmp_path / "conf" / "run.toml"
    assert run_file_benchmark("deflectbench-v1-es", config) == "deflectbench-v1-es"
    assert run_file_benchmark("packs/mine.json", config) == str(tmp_path / "conf/packs/mine.json")
    assert run_file_benchmark("/abs/mine.json", config) == "/abs/mine.json"
    assert run_file_benchmark(None, config) is None
