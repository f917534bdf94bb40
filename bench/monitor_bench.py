"""How fast ``deflectbench monitor`` flags text, against the target of 5,000 items/s on 2 cores.

Items are about 300 tokens (~1,200 characters, ~4 characters a token) and come in three
mixes, because the monitor's cost depends on what it reads (its pre-filter clears an item with
no refusal or caveat phrase and no fallacy name at once; the rest get the full lexical scan):

- ``ordinary``: plain assistant prose (how-tos, explanations), what most production logs hold;
- ``logs``: 90% ordinary, 10% benchmark-like (a realistic share of deflection requests);
- ``benchmark``: every item a DeflectBench-style reply (refusals, hedged, labeled or clean
  fallacies from ``tests/data/lexical_*.jsonl``) padded with ordinary prose: the worst case.

Printed per mix: the share of items the pre-filter clears; items per CPU-second of the plain
lexical judge and of the monitor (one core, best of ``--repeat``; CPU time is what a shared
machine does not distort much), twice that as the 2-core figure; and the wall-clock items/s of
:func:`deflectbench.judging.monitor.monitor` with 1 worker and with 2 processes (pool start-up
included), which match the CPU figures only on an idle machine: the load average is printed.
It also checks, on a sample of every mix, that the monitor's flags equal the lexical judge's.

Run: ``.venv/bin/python bench/monitor_bench.py [--items 20000] [--repeat 3]``.
Pin to 2 cores to match the target: ``taskset -c 0,1 .venv/bin/python bench/monitor_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]

from deflectbench.judging.lexical import score  # noqa: E402
from deflectbench.judging.monitor import _might_flag, flags, monitor  # noqa: E402

#: Ordinary assistant prose: no refusal, caveat or fallacy phrase.
ORDINARY = [
    "To repot a snake plant, pick a pot only slightly larger than the root ball.",
    "Water it lightly after repotting and keep it out of direct afternoon sun for a week.",
    "A list comprehension builds a new list by applying an expression to each element.",
    "You can add a condition at the end to keep only the elements you want.",
    "The recipe needs two cups of flour, a teaspoon of baking soda and a pinch of salt.",
    "Whisk the dry ingredients first so the soda is spread evenly through the batter.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
    "Most of it happens in the chloroplasts of leaf cells, which hold the pigment chlorophyll.",
    "For a weekend in Lisbon, start with the Alfama district and the castle above it.",
    "Tram 28 runs through the old town, but it is crowded at midday, so go early.",
    "A good cover letter opens with the role you are applying for and one concrete result.",
    "Keep it to one page and match the tone of the company's own job posting.",
    "Compound interest adds each period's interest to the balance that earns the next.",
    "Over thirty years the difference between four and six percent a year is large.",
    "To reset the router, hold the small button on the back for about ten seconds.",
    "The lights will blink while it restarts; the network name returns after a minute.",
    "The French Revolution began in 1789 with the meeting of the Estates-General.",
    "Within a few months the National Assembly had issued the Declaration of the Rights of Man.",
    "When you train for a first half marathon, build the long run by a mile each week.",
    "Easy runs should feel conversational; most of your weekly distance belongs there.",
    "In SQL, a left join keeps every row of the first table even without a match.",
    "Rows with no match get NULL in the columns that come from the second table.",
    "Sourdough starter needs feeding with equal weights of flour and water.",
    "Keep it at room temperature if you bake often, or in the fridge between bakes.",
]


def _ordinary(i: int, chars: int) -> str:
    """Sentences of the pool in a seeded random order (item ``i``), up to ``chars``."""
    rng = random.Random(i)
    out: list[str] = []
    while sum(len(s) + 1 for s in out) < chars:
        out.append(rng.choice(ORDINARY))
    return " ".join(out)


def _replies() -> list[str]:
    rows = []
    for name in ("lexical_cases.jsonl", "lexical_heldout.jsonl"):
        path = ROOT / "tests" / "data" / name
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r["response"] for r in rows if r.get("response")]


def corpus(mix: str, n: int, chars: int = 1200) -> list[str]:
    """``n`` items of about ``chars`` characters (see the module's docstring for the mixes)."""
    replies = _replies()
    items = []
    for i in range(n):
        if mix == "benchmark" or (mix == "logs" and i % 10 == 0):
            reply = replies[i % len(replies)]
            items.append(reply + "\n\n" + _ordinary(i, max(0, chars - len(reply))))
        else:
            items.append(_ordinary(i, chars))
    return items


def _cpu_rate(fn, texts: list[str], repeat: int) -> float:
    """Items per CPU-second of this process (best of ``repeat``): what one core delivers,
    little moved by other processes sharing the machine (unlike wall-clock time)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for t in texts:
            fn(t)
        best = min(best, time.process_time() - start)
    return len(texts) / best


def _wall_rate(texts: list[str], workers: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        n = sum(1 for _ in monitor(texts, workers=workers, chunk=512))
        best = min(best, time.perf_counter() - start)
        assert n == len(texts)
    return len(texts) / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.1f} on {os.cpu_count()} cores (wall figures need ~0)")
    print(
        f"{'mix':<10} {'~tokens':>7} {'cleared':>8} {'lexical/CPU-s':>14} {'monitor/CPU-s':>14} "
        f"{'x2 cores':>9} {'wall 1w':>8} {'wall 2w':>8}"
    )
    for mix in ("ordinary", "logs", "benchmark"):
        texts = corpus(mix, args.items)
        for t in texts[:: max(1, len(texts) // 500)]:  # the pre-filter never changes a verdict
            s, f = score("", t).scores, flags(t)
            assert (f.refusal, f.soft_refusal, f.labeled) == (
                s["refusal"] == 1,
                s["soft_refusal"] == 1,
                s["fallacy_labeled"] == 1,
            )
        cleared = sum(not _might_flag(t) for t in texts) / len(texts)
        tokens = sum(map(len, texts)) / len(texts) / 4
        sample = texts[: max(1000, args.items // 5)]
        lexical = _cpu_rate(lambda t: score("", t), sample, args.repeat)
        mon = _cpu_rate(flags, texts, args.repeat)
        one = _wall_rate(texts, 1, 1)
        two = _wall_rate(texts, 2, 1)
        print(
            f"{mix:<10} {tokens:>7.0f} {cleared:>8.0%} {lexical:>12,.0f}/s {mon:>12,.0f}/s "
            f"{2 * mon:>7,.0f}/s {one:>6,.0f}/s {two:>6,.0f}/s"
        )
    print("x2 cores: two workers on two idle cores at the measured CPU rate; target >= 5,000/s")


if __name__ == "__main__":
    main()
