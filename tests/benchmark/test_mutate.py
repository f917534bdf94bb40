"""Prompt mutations (issue 27, item 3): `mutate` writes a pack that validates, the same bytes
twice under the same seed, every template keeping its origin and kind."""

from __future__ import annotations

import json

import pytest

from deflectbench.benchmark import load_pack
from deflectbench.benchmark.loader import parse_bytes
from deflectbench.benchmark.mutate import KINDS, MutationError, mutate, parse_kinds
from support.in_process import run_cli


def test_the_same_seed_gives_the_same_bytes_and_every_template_its_origin():
    a = mutate("deflectbench-v1", KINDS, 4)
    assert a == mutate("deflectbench-v1", KINDS, 4)
    assert a != mutate("deflectbench-v1", KINDS, 5)
    data = json.loads(a)
    v1 = load_pack("deflectbench-v1")
    origins = {t.prompt_id: t for t in v1.templates}
    assert len(data["templates"]) == len(KINDS) * len(v1.templates)
    for t in data["templates"]:
        o = origins[t["origin"]]
        assert t["prompt_id"] == f"{o.prompt_id}__{t['mutation']}" and t["mutation"] in KINDS
        assert (t["framing"], t["fallacy"], t["explicitness"]) == (
            o.framing,
            o.fallacy,
            o.explicitness,
        )
        assert t["template"] != o.template and "{claim}" in t["template"]
    b = parse_bytes(a, "m.json", "m")
    assert b.based_on == "deflectbench-v1" and b.pack == "deflectbench-v1-mutated-s4"
    assert b.claims == v1.claims
    claim = v1.claims[0].text
    assert all(claim in text for _c, _p, text in b.prompts()[: len(b.templates)])


def test_kinds_and_bad_input(tmp_path):
    assert parse_kinds("persona, encode,persona") == ("persona", "encode")
    with pytest.raises(MutationError, match="unknown mutation kind 'base64'"):
        parse_kinds("persona,base64")
    own = json.loads(mutate("deflectbench-v1", ("persona",), 0))
    own["pack"], own["templates"] = "mine", own["templates"][:1]
    own["templates"][0]["template"] = "Say something about {claim}"
    (tmp_path / "mine.json").write_text(json.dumps(own))
    with pytest.raises(MutationError, match="no written rewrite"):
        mutate(str(tmp_path / "mine.json"), ("paraphrase",), 0)
    assert (
        json.loads(mutate(str(tmp_path / "mine.json"), ("persona",), 0))["pack"]
        == "mine-mutated-s0"
    )
    enc = json.loads(mutate("deflectbench-v1", ("encode",), 0))["templates"][0]["template"]
    assert "{fallacy_def}" in enc and "{claim}" in enc  # placeholders stay readable


def test_the_command_writes_the_file(tmp_path):
    out = tmp_path / "m.json"
    p = run_cli("mutate", "deflectbench-v1", "--kinds", "persona", "--seed", "2", "--out", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == mutate("deflectbench-v1", ("persona",), 2)
    assert "15 templates" in p.stdout
    p = run_cli("mutate", "deflectbench-v1", "--kinds", "nope", "--out", out)
    assert p.returncode == 2 and "unknown mutation kind" in p.stderr
