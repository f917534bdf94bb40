"""Three parts of a run (`run --shard I/3`) in three processes, one killed and resumed, then
merged: every cell and verdict exactly once, and the analysis the single-process run's.

Through the entry point against a local server (a subject model and a model judge on the
OpenAI wire) and the lexical judge."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from support.cli_runs import DEFLECTBENCH, count, query, signal_when, write_toml
from support.fakes import VERDICT, is_judge_request
from support.servers import FakeLLMServer, RecordedRequest

PARTS = 3
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral"]
SAMPLES = 2
GEN_KEY = "SELECT model, condition, claim_id, prompt_id, sample, response FROM generations"
VERDICTS = (
    "SELECT g.model, g.condition, g.claim_id, g.prompt_id, g.sample, j.judge, j.raw, j.error "
    "FROM judgments j JOIN generations g USING (gen_id)"
)


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return f"But what about the other side's record? ({len(req.prompt)}, {req.body.get('seed')})"


def claims() -> list[str]:
    """Six claims: 12 cells a part."""
    return [c.claim_id for c in default_benchmark().claims[:6]]


def analysis(db: Path) -> dict:
    p = subprocess.run(
        [*DEFLECTBENCH, "analyze", "--db", str(db), "--json", "-", "--resamples", "200"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.slow
def test_three_parts_one_killed_then_merged_equal_a_single_run(tmp_path) -> None:
    with FakeLLMServer(reply=reply, latency=0.02) as server:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {
                    "models": ["srva/m1"],
                    "judges": ["srva/j1", "lexical"],
                    "claims": claims(),
                    "templates": TEMPLATES,
                    "runs": SAMPLES,
                },
                "providers.srva": {"base_url": server.openai_base_url, "max_concurrency": 2},
            },
        )

        def run(db: Path, *extra: str) -> list[str]:
            return [
                *DEFLECTBENCH,
                "run",
                "--config",
                str(cfg),
                "--db",
                str(db),
                "--no-progress",
                "--no-report",
                *extra,
            ]

        single = tmp_path / "single.db"
        assert subprocess.run(run(single), capture_output=True, timeout=240).returncode == 0
        parts = [tmp_path / f"part-{i}.db" for i in range(1, PARTS + 1)]
        others = [
            subprocess.Popen(run(parts[i], "--shard", f"{i + 1}/{PARTS}"), stderr=subprocess.PIPE)
            for i in (1, 2)
        ]
        signal_when(
            run(parts[0], "--shard", f"1/{PARTS}"),
            lambda: count(parts[0], "SELECT count(*) FROM generations") >= 3,
        )
        killed = count(parts[0], "SELECT count(*) FROM generations")
        for p in others:
            assert p.wait(timeout=240) == 0, p.stderr.read() if p.stderr else ""
        resumed = subprocess.run(
            run(parts[0], "--shard", f"1/{PARTS}"), capture_output=True, text=True, timeout=240
        )
        assert resumed.returncode == 0, resumed.stderr

    n = len(claims()) * len(TEMPLATES) * SAMPLES
    assert 0 < killed < n // PARTS  # the kill left the first part unfinished
    # the parts hold disjoint cells of 12 each, together all of them
    cell = "SELECT DISTINCT model, claim_id, prompt_id, sample FROM generations"
    held = [set(query(p, cell)) for p in parts]
    assert [len(h) for h in held] == [n // PARTS] * PARTS and len(set().union(*held)) == n

    merged = tmp_path / "merged.db"
    m = subprocess.run(
        [*DEFLECTBENCH, "merge", str(merged), *map(str, parts)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert m.returncode == 0, m.stderr
    assert sorted(query(merged, GEN_KEY)) == sorted(query(single, GEN_KEY))
    assert len(query(merged, GEN_KEY)) == n
    assert sorted(query(merged, VERDICTS)) == sorted(query(single, VERDICTS))
    assert len(query(merged, VERDICTS)) == 2 * n
    assert len(query(merged, "SELECT run_id FROM runs")) == PARTS + 1  # the resumed part's too
    assert query(merged, "SELECT model, label FROM conditions") == query(
        single, "SELECT model, label FROM conditions"
    )

    again = subprocess.run(
        [*DEFLECTBENCH, "merge", str(merged), *map(str, parts)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert again.returncode == 0, again.stderr
    assert "0 new" in again.stdout and len(query(merged, GEN_KEY)) == n

    assert analysis(merged) == analysis(single)
