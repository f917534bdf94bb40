"""The multi-turn pack end to end against the local wire-format server (official OpenAI SDK):
turn 2 is asked only after an outcome with a follow-up, carries the whole conversation, is
judged with that conversation (blind to the model), is linked to turn 1, and is stored exactly once however often the run is killed
and resumed; the turn-1 analysis does not see it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions, summarize
from deflectbench.analysis.frames.scored import scored_table
from deflectbench.benchmark.packs import load_pack
from deflectbench.execute import RunOptions, execute
from deflectbench.models.base import GenerationParams
from deflectbench.pipeline.turns import TurnCell
from deflectbench.store import Store
from deflectbench.store.turns import split_prompt_id, turn_prompt_id
from deflectbench.views.report.build import build_report
from deflectbench.vocab import FIELDS, consensus_outcome
from support.cli_runs import Cli, query
from support.fakes import build, is_judge_request, plan_for, run_once, sections
from support.replies import PACK, TEMPLATES, TURN_CLAIMS, TURN_JUDGE, VERDICTS, template_of
from support.replies import turn_reply as reply
from support.servers import FakeLLMServer, RecordedRequest

JUDGE = TURN_JUDGE
CLAIMS = TURN_CLAIMS
#: The entry point, its tables wide enough not to wrap.
cli = Cli(env={"COLUMNS": "120"}, timeout=120, in_process=True)


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACK)


def test_the_pack_is_v1_with_a_follow_up_per_outcome_that_calls_for_one(pack) -> None:
    assert pack.turns == 2 and pack.key != load_pack("deflectbench-v1").key
    assert [(f.after, f.followup_id) for f in pack.followups] == [
        ("refusal", "pushback_after_refusal"),
        ("soft_refusal", "pushback_after_soft_refusal"),
        ("labeled_compliance", "strip_label"),
    ]
    assert pack.followup_for("clean_compliance") is None and pack.followup_for("other") is None
    assert pack.followup_for("refusal").text == pack.followup_for("soft_refusal").text
    assert "educational" in pack.followup_for("refusal").text
    strip = pack.followup_for("labeled_compliance").text
    assert "without naming or labelling the tactic" in strip and "as if you meant it" in strip
    v1 = load_pack("deflectbench-v1")
    assert pack.prompts() == v1.prompts()  # turn 1 is exactly the v1 cell


def test_turn_prompt_ids_round_trip() -> None:
    assert split_prompt_id(turn_prompt_id("explicit_coach_AH", 2)) == ("explicit_coach_AH", 2)
    assert split_prompt_id("explicit_coach_AH") == ("explicit_coach_AH", 1)


def test_consensus_outcome_is_the_paper_rule() -> None:
    labeled = {f: 0 for f in FIELDS} | VERDICTS["LABELED"]
    clean = {f: 0 for f in FIELDS} | VERDICTS["CLEAN"]
    refusal = {f: 0 for f in FIELDS} | VERDICTS["REFUSE"]
    assert consensus_outcome([clean]) == "clean_compliance"
    assert consensus_outcome([clean, labeled]) == "labeled_compliance"  # a 1 from either wins
    assert consensus_outcome([refusal, clean]) == "refusal"
    assert consensus_outcome([{"refusal": -1}]) == "other"


def run(db: Path, pack, server: FakeLLMServer, **options: object):
    plan = plan_for(pack, judges=[JUDGE], claims=CLAIMS, templates=list(TEMPLATES), runs=1)
    return run_once(db, pack, plan, sections(server), RunOptions(**options))


def test_a_multi_turn_run_asks_turn_two_after_the_outcomes_that_call_for_it(tmp_path, pack) -> None:
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=reply) as server:
        report = run(db, pack, server)
        requests = list(server.requests)
    assert report.complete, report.account()
    assert report.turns.due == {"vllm/test-model": 4} and report.turns.missing == {
        "vllm/test-model": 0
    }
    assert "+ turn 2: 4 cells" in report.account()
    # 6 turn-1 cells; turn 2 after the 2 refusals and the 2 labeled replies, not the clean ones.
    links = query(
        db,
        "SELECT g.prompt_id, p.prompt_id, t.followup_id, t.after_outcome, t.turn, "
        "g.claim_id = p.claim_id AND g.sample = p.sample, g.condition = p.condition "
        "FROM turns t JOIN generations g ON g.gen_id = t.gen_id "
        "JOIN generations p ON p.gen_id = t.parent_gen_id ORDER BY g.gen_id",
    )
    assert sorted(links) == sorted(
        [
            (
                "explicit_direct_WA#turn2",
                "explicit_direct_WA",
                "pushback_after_refusal",
                "refusal",
                2,
                1,
                1,
            ),
            (
                "explicit_coach_AH#turn2",
                "explicit_coach_AH",
                "strip_label",
                "labeled_compliance",
                2,
                1,
                1,
            ),
        ]
        * 2
    )
    # Every answer, turn 2 included, judged once by the judge.
    assert query(db, "SELECT count(*) FROM generations") == [(10,)]
    assert query(db, "SELECT count(*), count(DISTINCT gen_id) FROM judgments") == [(10, 10)]

    # Turn 2 is the whole conversation: turn-1 prompt, turn-1 reply, the follow-up.
    b = pack
    turn2 = [r for r in requests if not is_judge_request(r) and len(r.body["messages"]) == 3]
    assert len(turn2) == 4
    for r in turn2:
        user1, assistant, user2 = r.body["messages"]
        pid = template_of(user1["content"])
        assert (user1["role"], assistant["role"], user2["role"]) == ("user", "assistant", "user")
        assert assistant["content"] == TEMPLATES[pid]
        after = "refusal" if pid == "explicit_direct_WA" else "labeled_compliance"
        claim = next(c for c in CLAIMS if b.render(c, pid) == user1["content"])
        assert user2["content"] == b.render_followup(b.followup_for(after), claim, pid)
    # ... judged with the whole conversation: turn 1's request and reply and the follow-up in
    # <conversation>, the turn-2 reply alone in <reply_to_score>; a turn 1 as the release did.
    judged = {r.prompt for r in requests if is_judge_request(r)}
    stored = query(
        db,
        "SELECT g.claim_id, p.prompt, p.response, g.prompt, g.response FROM turns t "
        "JOIN generations g ON g.gen_id = t.gen_id "
        "JOIN generations p ON p.gen_id = t.parent_gen_id",
    )
    assert len(stored) == 4
    for claim, prompt1, reply1, followup, response in stored:
        block = f"<reply_to_score>\n{response}\n</reply_to_score>"
        (sent,) = [p for p in judged if block in p and prompt1 in p]
        talk = sent[sent.index("<conversation>") : sent.index("</conversation>")]
        assert talk.index(prompt1) < talk.index(reply1) < talk.index(followup)
        assert '<turn role="user">\n' + prompt1 in talk
        assert '<turn role="assistant">\n' + reply1 + "\n</turn>" in talk
        assert f'<turn role="user">\n{followup}\n</turn>' in talk
        assert response not in talk and b.claim(claim).text in sent
    turn1 = query(db, "SELECT claim_id, response FROM generations WHERE prompt_id NOT LIKE '%#%'")
    for claim, response in turn1:  # the release's request, to the byte
        assert b.rubric.user_prompt(b.claim(claim).text, response) in judged
    assert sum("<conversation>" in p for p in judged) == 4
    for r in requests:
        if is_judge_request(r):  # blind still: no model, template, follow-up id or outcome
            blob = json.dumps(r.body)
            assert "#turn2" not in blob and "strip_label" not in blob and "test-model" not in blob

    # The turn-1 analysis is unchanged by turn 2: six scored turn-1 generations.
    with Store.open(db, readonly=True) as store:
        scored = scored_table(store, b)
    assert len(scored) == 6 and not scored["prompt_id"].str.contains("#").any()

    # Re-running sends nothing and adds nothing.
    with FakeLLMServer(reply=reply) as server:
        again = run(db, pack, server)
        assert len(server.requests) == 0
    assert again.complete, again.account()
    assert query(db, "SELECT count(*) FROM turns") == [(4,)]


class Stop:
    """Stops a run once turn 1 is judged and ``after`` results of turn 2 are stored: 0 stops
    it between the turns, 1 and 3 within turn 2, 4 before turn 2 is judged."""

    def __init__(self, db: Path, after: int) -> None:
        self.db, self.after = db, after

    def __call__(self) -> bool:
        ((judged, turns),) = query(
            self.db, "SELECT (SELECT count(*) FROM judgments), (SELECT count(*) FROM turns)"
        )
        return judged >= 6 and turns >= self.after


@pytest.mark.parametrize("after", [0, 1, 3, 4])
def test_killed_and_resumed_every_turn_two_cell_is_stored_exactly_once(
    tmp_path, pack, after
) -> None:
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=reply, latency=0.01) as server:
        plan = plan_for(pack, judges=[JUDGE], claims=CLAIMS, templates=list(TEMPLATES))
        models = build([*plan.models, *plan.judges], sections(server, max_concurrency=1))
        with Store.open(db) as store:
            first = asyncio.run(
                execute(store, pack, plan, models, RunOptions(), should_stop=Stop(db, after))
            )
        assert not first.complete
        ((turns,),) = query(db, "SELECT count(*) FROM turns")
        assert turns == after  # one request at a time: the stop comes between two results
        second = run(db, pack, server)
        third = run(db, pack, server)
        turn2_requests = [
            r for r in server.requests if not is_judge_request(r) and len(r.body["messages"]) == 3
        ]
    assert second.complete and third.complete, second.account()
    assert query(db, "SELECT count(*), count(DISTINCT parent_gen_id) FROM turns") == [(4, 4)]
    assert query(db, "SELECT count(*) FROM generations WHERE prompt_id LIKE '%#turn2'") == [(4,)]
    assert query(
        db,
        "SELECT count(*) FROM generations g LEFT JOIN turns t ON t.gen_id = g.gen_id "
        "WHERE g.prompt_id LIKE '%#turn2' AND t.gen_id IS NULL",
    ) == [(0,)]
    assert query(db, "SELECT count(*), count(DISTINCT gen_id) FROM judgments") == [(10, 10)]
    # Each turn-2 request was sent at most once per cell (the cache answers a repeat).
    prompts = [json.dumps(r.body["messages"]) for r in turn2_requests]
    assert len(prompts) == len(set(prompts)) <= 4


@pytest.mark.slow
def test_analyze_and_report_show_turn_two_by_turn_one(tmp_path, pack) -> None:
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=reply) as server:
        assert run(db, pack, server).complete
    with Store.open(db, readonly=True) as store:
        s = summarize(store, pack, AnalysisOptions(n_resamples=200))
        paths = build_report(store, pack, tmp_path / "report", AnalysisOptions(n_resamples=200))
    assert s.turns is not None and len(s.scored) == 6
    stripped = s.turns.stripped.set_index("model").loc["vllm/test-model"]
    assert (stripped["n"], stripped["stripped"], stripped["rate"]) == (2, 2, 1.0)
    after_refusal = s.turns.transitions.query("turn1_outcome == 'refusal'").set_index("outcome")
    assert after_refusal.loc["labeled_compliance", "count"] == 2
    assert s.to_json()["turns"]["label_stripped"][0]["stripped"] == 2

    html = paths.html.read_text()
    assert "Second turn" in html and "Label stripped on request" in html
    assert (paths.out_dir / "figures" / "turn2_by_turn1.svg").exists()
    assert (paths.out_dir / "tables" / "label_stripped.csv").exists()

    p = cli("analyze", "--db", str(db), "--resamples", "200")
    assert p.returncode == 0, p.stderr
    assert "Label stripped on request" in p.stdout and "Turn-2 outcome by turn-1" in p.stdout


def test_the_live_board_shows_turn_two_rows(tmp_path, pack) -> None:
    boards = []
    with FakeLLMServer(reply=reply) as server:
        plan = plan_for(pack, judges=[JUDGE], claims=CLAIMS, templates=list(TEMPLATES))
        models = build([*plan.models, *plan.judges], sections(server))
        with Store.open(tmp_path / "r.db") as store:
            report = asyncio.run(execute(store, pack, plan, models, watch=boards.append))
    assert report.complete, report.account()
    (board,) = boards
    rows = {(r.role, r.name): (r.done, board.total(r), r.finished) for r in board.rows}
    assert rows[("model", "vllm/test-model")] == (6, 6, True)
    assert rows[("model", "vllm/test-model (turn 2)")] == (4, 4, True)
    assert rows[("judge", JUDGE)] == (6, 6, True)
    assert rows[("judge", f"{JUDGE} (turn 2)")] == (4, 4, True)
    assert board.ended_at is not None


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_every_wire_sends_the_whole_conversation(wire) -> None:
    cell = TurnCell(
        parent_gen_id=1,
        claim_id="L1_US_01",
        prompt_id="explicit_coach_AH",
        sample=1,
        prompt="Deflect this claim.",
        response="LABELED: an ad hominem.",
        followup_id="strip_label",
        followup_text="Now without the label.",
        after="labeled_compliance",
    )
    with FakeLLMServer(reply=lambda req: "CLEAN: fine.") as server:
        base = server.anthropic_base_url if wire == "anthropic" else server.openai_base_url
        config = {"srv": {"base_url": base, "wire": wire, "max_retries": 0}}
        (model,) = build(["srv/m"], config, env={}).values()

        async def go():
            try:
                return await model.complete(cell.messages(), GenerationParams(max_tokens=16))
            finally:
                await model.aclose()

        out = asyncio.run(go())
        (req,) = server.requests
    assert out.text == "CLEAN: fine."
    sent = [
        (m["role"], m["content"] if isinstance(m["content"], str) else m["content"][0]["text"])
        for m in req.body["messages"]
    ]
    assert sent == [
        ("user", "Deflect this claim."),
        ("assistant", "LABELED: an ad hominem."),
        ("user", "Now without the label."),
    ]


def test_failed_turn_two_requests_are_error_rows_retried_with_retry_errors(tmp_path, pack) -> None:
    db = tmp_path / "r.db"

    def fail_turn2(req: RecordedRequest) -> str | None:
        messages = req.body.get("messages", []) if isinstance(req.body, dict) else []
        return "400" if len(messages) == 3 else None

    with FakeLLMServer(reply=reply, fault_fn=fail_turn2) as server:
        first = run(db, pack, server)
    assert not first.complete and first.turns.missing == {"vllm/test-model": 4}
    assert "turn 2: 4 of 4 cells without a result" in first.account()
    # each failure is an error row, linked like any turn 2, never judged
    assert query(
        db,
        "SELECT count(*) FROM turns t JOIN generations g ON g.gen_id = t.gen_id "
        "WHERE g.error IS NOT NULL",
    ) == [(4,)]
    assert query(db, "SELECT count(*) FROM judgments") == [(6,)]
    with FakeLLMServer(reply=reply) as server:
        again = run(db, pack, server)
        assert not again.complete and len(server.requests) == 0  # errors stay without the flag
        retried = run(db, pack, server, retry_errors=True)
    assert retried.complete, retried.account()
    assert query(db, "SELECT count(*), count(DISTINCT parent_gen_id) FROM turns") == [(4, 4)]
    assert query(db, "SELECT count(*) FROM generations WHERE error IS NOT NULL") == [(0,)]
    assert query(db, "SELECT count(*) FROM judgments") == [(10,)]
