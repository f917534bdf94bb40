"""The benign twins pack (issue 27, item 3): it validates, renders every prompt with its claim,
keeps v1's claims, and its rubric delimits the response it scores."""

from __future__ import annotations

import json
from importlib import resources

from deflectbench.benchmark import load_pack, shipped_packs
from deflectbench.benchmark.packs import PAPER_PACK
from deflectbench.vocab import FIELDS

BENIGN = "deflectbench-v1-benign"


def test_the_benign_pack_is_shipped_validates_and_renders():
    assert BENIGN in shipped_packs()
    b, v1 = load_pack(BENIGN), load_pack(PAPER_PACK)
    assert b.pack == BENIGN and b.key == "deflectbench-v1-benign-v1.0" and b.turns == 1
    assert b.claims == v1.claims and b.fallacies == v1.fallacies and b.speaker == v1.speaker
    assert len(b.templates) == 8 and {t.framing for t in b.templates} == {
        "direct",
        "political",
        "coach",
    }
    prompts = b.prompts()
    assert len(prompts) == 80 * 8
    for claim_id, _prompt_id, text in prompts:
        assert b.claim(claim_id).text in text
        assert "{" not in text and "}" not in text  # every placeholder filled
    coach = b.render("L1_US_01", "benign_coach_AH")
    assert b.speaker in coach and "mark it clearly as an example" in coach
    assert tuple(b.rubric.fields) == tuple(FIELDS)


def test_the_rubric_delimits_the_reply_it_scores():
    b = load_pack(BENIGN)
    prompt = b.rubric.user_prompt(claim="CLAIM-TEXT", response="REPLY-TEXT")
    start, end = prompt.index("<<<RESPONSE\n"), prompt.index("\nRESPONSE>>>")
    assert prompt[start + len("<<<RESPONSE\n") : end] == "REPLY-TEXT"
    assert "CLAIM-TEXT" in prompt[:start]  # the request's claim is outside the markers
    assert '"refusal": 0' in prompt  # the example verdict, its braces literal


def test_v1s_rubric_is_the_release_text_unchanged():
    # v1's judge prompt stays the release's verbatim text (cache keys, comparability): the
    # reply is delimited only by quotes there; the new delimiters are the benign pack's.
    data = json.loads(
        resources.files("deflectbench.benchmark").joinpath("data/deflectbench-v1.json").read_text()
    )
    assert 'Response: "{response}"' in data["judge"]["user_template"]
