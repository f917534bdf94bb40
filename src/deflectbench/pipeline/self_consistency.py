"""Judge self-consistency: re-judge a seeded sample of answers with each judge.

``deflectbench judge --self-consistency 0.02 --seed N`` takes the answers of the pack that
every named judge has a parsed verdict on, ranks them by a hash of the seed and their id, and
sends the first 2% (at least one) to each judge again, the request cache bypassed (a cached
reply would agree with itself by construction). The replies go to their own table
(:mod:`deflectbench.store.rejudgments`), never among the verdicts; the analysis then sets a
judge's agreement with itself beside its agreement with the other judges on the same answers.
The same seed gives the same sample; a re-run sends only what is not re-judged yet.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deflectbench.benchmark import Benchmark
from deflectbench.errors import ConfigError
from deflectbench.judging.judges import ModelJudge, lexical_judgment, read_verdict
from deflectbench.models.base import ModelError
from deflectbench.store import Store
from deflectbench.store.rejudgments import add_rejudgment, rejudged


def check_share(share: float) -> float:
    """A share of answers in (0, 1] (ConfigError otherwise)."""
    if not isinstance(share, int | float) or not math.isfinite(share) or not 0 < share <= 1:
        raise ConfigError(f"--self-consistency {share!r}: give a share in (0, 1], e.g. 0.02")
    return float(share)


def consistency_sample(gen_ids: Sequence[int], share: float, seed: int) -> list[int]:
    """``share`` of ``gen_ids`` (at least one, if any), chosen by ``seed``: the same ids and
    seed give the same sample, whatever their order."""
    ids = sorted(set(gen_ids))
    if not ids:
        return []
    n = max(1, math.floor(share * len(ids) + 0.5))

    def rank(g: int) -> bytes:
        return hashlib.sha256(f"{seed}|{g}".encode()).digest()

    return sorted(sorted(ids, key=rank)[:n])


def judged_by_all(store: Store, benchmark: Benchmark, judges: Sequence[str]) -> list[int]:
    """The pack's answers every one of ``judges`` has a parsed verdict on."""
    marks = ",".join("?" * len(judges))
    rows = store.conn.execute(
        f"""SELECT j.gen_id FROM judgments j JOIN generations g ON g.gen_id = j.gen_id
        WHERE g.benchmark = ? AND j.judge IN ({marks}) AND j.error IS NULL
        AND j.parse_error = 0 GROUP BY j.gen_id HAVING count(DISTINCT j.judge) = ?""",
        (benchmark.key, *judges, len(set(judges))),
    )
    return [int(r[0]) for r in rows]


@dataclass
class Rejudged:
    """One judge's self-consistency pass: answers sampled, sent now, failed."""

    sampled: int = 0
    sent: int = 0
    failed: int = 0


async def rejudge(
    store: Store,
    benchmark: Benchmark,
    judges: Mapping[str, ModelJudge | None],
    share: float,
    seed: int,
) -> dict[str, Rejudged]:
    """Re-judge the seeded sample with every judge (None: the rule-based one); resumable."""
    sample = consistency_sample(judged_by_all(store, benchmark, list(judges)), share, seed)
    texts = _answers(store, sample)
    out: dict[str, Rejudged] = {}
    for name, judge in judges.items():
        todo = [g for g in sample if g not in rejudged(store, name, seed)]
        result = out[name] = Rejudged(sampled=len(sample), sent=len(todo))
        if judge is None:
            for g in todo:
                claim_id, response = texts[g]
                rec = lexical_judgment(g, benchmark.claim(claim_id).text, response, None)
                add_rejudgment(store, g, name, seed, said=rec.said, raw=rec.raw)
            continue
        result.failed = await _rejudge_with(store, benchmark, name, judge, todo, texts, seed)
    return out


async def _rejudge_with(
    store: Store,
    benchmark: Benchmark,
    name: str,
    judge: ModelJudge,
    todo: Sequence[int],
    texts: Mapping[int, tuple[str, str]],
    seed: int,
) -> int:
    """Send each answer of ``todo`` to a model judge again; the failures, counted."""
    limit = asyncio.Semaphore(max(1, min(judge.model.max_concurrency, 8)))

    async def one(g: int) -> bool:
        claim_id, response = texts[g]
        async with limit:
            try:
                c = await judge.model.complete(
                    judge.messages(benchmark.claim(claim_id).text, response), judge.params()
                )
            except ModelError as exc:
                add_rejudgment(store, g, name, seed, said=None, raw=None, error=str(exc))
                return False
        parsed = read_verdict(judge.rubric, c.text, c.finish_reason)
        add_rejudgment(store, g, name, seed, said=parsed.said, raw=c.text, cost_usd=c.cost_usd)
        return True

    done = await asyncio.gather(*(one(g) for g in todo))
    return sum(not ok for ok in done)


def _answers(store: Store, gen_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    if not gen_ids:
        return {}
    rows = store.conn.execute(
        f"SELECT gen_id, claim_id, response FROM generations "
        f"WHERE gen_id IN ({','.join('?' * len(gen_ids))})",
        tuple(gen_ids),
    )
    return {int(r[0]): (str(r[1]), str(r[2])) for r in rows}
