"""The self-consistency pass is budgeted like every request (issue 27, item 4): each re-judgment
reserves its maximum cost before it is sent and is settled on the reply (its cost stored), a
budget that allows k of n re-judgments sends k and exits 3 as a run's budget stop does, with
the rest kept as not-sent rows the next pass sends; an unpriced judge is refused under a
budget; ``judge --dry-run`` prints the pass's cost and sends nothing. Against the local
wire-format server (official OpenAI SDK), through the entry point."""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

from deflectbench.vocab import FIELDS
from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer, RecordedRequest

JUDGE = "judges/j"
CLAIMS = ["L1_US_01", "L1_US_02", "L2_INT_01", "L3_US_01"]  # x 15 templates: 60 answers
#: Output price (USD per million tokens); input is free, so a request's reservation is its
#: max_tokens (512, the judge's) at this price and its cost its reply's tokens at it.
OUT_PRICE = 1.0
RESERVED = 512 * OUT_PRICE / 1e6
VERDICT = json.dumps({"reasoning": "r", **dict.fromkeys(FIELDS, 0)})
#: What one reply costs: the test server counts a token a word.
REPLY_COST = len(VERDICT.split()) * OUT_PRICE / 1e6
EXIT_BUDGET = 3


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "200"
    return env


def _reply(req: RecordedRequest) -> str:
    if "Score the response below" in req.prompt:
        return VERDICT
    return f"An answer {zlib.crc32(req.prompt.encode())}"  # each its own: no cache hits


def _judge_requests(server: FakeLLMServer) -> int:
    return sum("Score the response below" in r.prompt for r in server.requests)


@pytest.fixture
def judged(tmp_path: Path):
    """A store of 60 answers judged by the lexical and a priced model judge (one request at a
    time, so the budget's arithmetic is the test's), and the server behind both."""
    with FakeLLMServer(reply=_reply) as server:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {"models": ["vllm/m"], "judges": ["lexical", JUDGE], "claims": CLAIMS},
                "providers.vllm": {"base_url": server.openai_base_url, "max_retries": 0},
                "providers.judges": {
                    "base_url": server.openai_base_url,
                    "max_retries": 0,
                    "max_concurrency": 1,
                },
                'prices."vllm/m"': {"input_per_mtok": 0.0, "output_per_mtok": 0.0},
                f'prices."{JUDGE}"': {"input_per_mtok": 0.0, "output_per_mtok": OUT_PRICE},
            },
        )
        db = tmp_path / "x.db"
        args = ("run", "--config", cfg, "--db", db, "--runs", "1", "--no-progress", "--no-report")
        p = run_cli(*args, env=_env())
        assert p.returncode == 0, (p.stdout, p.stderr)
        yield cfg, db, server


def _spent(db: Path) -> float:
    with sqlite3.connect(db) as c:
        return c.execute(
            "SELECT (SELECT coalesce(sum(cost_usd), 0) FROM generations) + "
            "(SELECT coalesce(sum(cost_usd), 0) FROM judgments) + "
            "(SELECT coalesce(sum(cost_usd), 0) FROM rejudgments)"
        ).fetchone()[0]


def test_a_budget_that_allows_k_of_n_rejudgments_sends_k(judged) -> None:
    cfg, db, server = judged
    before, sent_before = _spent(db), _judge_requests(server)
    assert before == pytest.approx(60 * REPLY_COST)  # the run's 60 verdicts, as the store has it
    n, k = 6, 4  # 10% of 60; one at a time, the k-th reservation fits, the (k+1)-th does not
    budget = before + (k - 1) * REPLY_COST + RESERVED + REPLY_COST / 2
    base = ("judge", "--config", cfg, "--db", db, "--no-progress", "--self-consistency", "0.1")
    p = run_cli(*base, "--seed", "3", "--max-cost", f"{budget:.10f}", env=_env())
    assert p.returncode == EXIT_BUDGET, (p.stdout, p.stderr)
    line = f"self-consistency {JUDGE}: {n} answers in the sample (seed 3), {k} re-judged now"
    assert f"{line}, {k * REPLY_COST:.4f} USD" in p.stdout, p.stdout
    assert f"self-consistency {JUDGE}: {n - k} not sent (budget reached:" in p.stderr, p.stderr
    assert "self-consistency: 2 re-judgments not sent (budget)" in p.stderr
    assert "Traceback" not in p.stderr
    assert _judge_requests(server) - sent_before == k
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT error IS NULL, error LIKE 'not sent: over the budget%', count(*), "
            "sum(cost_usd) FROM rejudgments WHERE judge = ? GROUP BY 1, 2",
            (JUDGE,),
        ).fetchall()
        lexical = c.execute("SELECT count(*) FROM rejudgments WHERE judge = 'lexical'").fetchone()
    by_kind = {(ok, withheld): (count, cost) for ok, withheld, count, cost in rows}
    assert by_kind[(1, None)][0] == k and by_kind[(1, None)][1] == pytest.approx(k * REPLY_COST)
    assert by_kind[(0, 1)] == (n - k, None)
    assert lexical == (n,)  # the rule-based judge costs nothing: all of its sample
    assert _spent(db) == pytest.approx(before + k * REPLY_COST) and _spent(db) <= budget

    # the same command without the budget sends only what was withheld
    p = run_cli(*base, "--seed", "3", env=_env())
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert f"{n} answers in the sample (seed 3), {n - k} re-judged now" in p.stdout
    assert _judge_requests(server) - sent_before == n
    with sqlite3.connect(db) as c:
        done = c.execute(
            "SELECT count(*), sum(cost_usd) FROM rejudgments WHERE judge = ? AND error IS NULL",
            (JUDGE,),
        ).fetchone()
    assert done[0] == n and done[1] == pytest.approx(n * REPLY_COST)


def test_the_dry_run_prints_the_pass_and_sends_nothing(judged) -> None:
    cfg, db, server = judged
    sent = len(server.requests)
    with sqlite3.connect(db) as c:
        stored = c.execute("SELECT count(*) FROM rejudgments").fetchone()[0]
    args = ("judge", "--config", cfg, "--db", db, "--self-consistency", "0.1", "--seed", "3")
    p = run_cli(*args, "--dry-run", env=_env())
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert len(server.requests) == sent
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM rejudgments").fetchone()[0] == stored == 0
    rows = {
        tuple(cell.strip() for cell in line.split("│")[1:3]): line
        for line in p.stdout.splitlines()
        if line.count("│") >= 8
    }
    sc = [x.strip() for x in rows[("self-consistency", JUDGE)].split("│")]
    # done, to send, tok in, tok out: 6 to send, a verdict's 90 tokens expected from each
    assert sc[3:5] == ["0", "6"] and sc[6] == "540"
    assert rows[("judge", JUDGE)].split("│")[4].strip() == "0"  # every answer judged already
    assert "Dry run: 60 stored answers of the pack; nothing was sent" in p.stdout


def test_the_estimate_prices_the_pass_as_the_budget_reserves_it(judged) -> None:
    """The pass's rows against the price by hand: expected at 90 tokens a verdict, at most
    512 (the judge's max_tokens) a reply; the prompt tokens at about 4 characters a token."""
    from deflectbench.benchmark.packs import load_pack
    from deflectbench.cost import Price
    from deflectbench.dry_run import DryRun, judge_estimate
    from deflectbench.store import Store

    cfg, db, server = judged
    b = load_pack("deflectbench-v1")
    price = Price(input_per_mtok=3.0, output_per_mtok=15.0)
    with Store.open(db, readonly=True) as store:
        rows = judge_estimate(
            store,
            b,
            ["lexical", JUDGE],
            DryRun(prices={JUDGE: price}),
            self_consistency=0.1,
            seed=3,
        )
        texts = dict(
            store.conn.execute("SELECT gen_id, claim_id || '|' || response FROM generations")
        )
    (sc,) = [r for r in rows if r.role == "self-consistency" and r.name == JUDGE]
    assert (sc.requests, sc.output_tokens, sc.output_tokens_max) == (6, 6 * 90, 6 * 512)
    rubric = round(len(b.rubric.system + b.rubric.user_template) / 4)
    per_answer = [
        rubric + round(len(b.claim(t.split("|")[0]).text + t.split("|", 1)[1]) / 4)
        for t in texts.values()
    ]
    assert min(per_answer) * 6 <= sc.input_tokens <= max(per_answer) * 6
    assert sc.cost_usd == pytest.approx((sc.input_tokens * 3.0 + 6 * 90 * 15.0) / 1e6)
    assert sc.cost_usd_max == pytest.approx((sc.input_tokens * 3.0 + 6 * 512 * 15.0) / 1e6)
    # what the pass then sends is what the estimate counted
    args = ("judge", "--config", cfg, "--db", db, "--no-progress", "--self-consistency", "0.1")
    sent = _judge_requests(server)
    p = run_cli(*args, "--seed", "3", env=_env())
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert _judge_requests(server) - sent == sc.requests


def test_an_unpriced_judge_is_refused_under_a_budget(judged, tmp_path: Path) -> None:
    cfg, db, server = judged
    text = cfg.read_text().replace(f'[prices."{JUDGE}"]', '[prices."other/x"]')
    unpriced = tmp_path / "unpriced.toml"
    unpriced.write_text(text)
    sent = len(server.requests)
    args = ("judge", "--config", unpriced, "--db", db, "--self-consistency", "0.1")
    p = run_cli(*args, "--max-cost", "5", "--no-progress", env=_env())
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"--max-cost cannot bound {JUDGE}: no known price" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and len(server.requests) == sent
