"""A small report-ready store with planted outcomes and hostile model text, shared by the
report, web and CLI tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from deflectbench.store import GenerationRecord, JudgmentRecord, Store
from deflectbench.vocab import FIELDS, apply_rules

MODELS = ("acme/alpha-1", "acme/beta-2")
JUDGES = ("judge-a", "judge-b")
PAYLOAD = "<script>alert(1)</script> <img src=x onerror=alert(1)> </table>"
LATE_PAYLOAD = '<iframe src="https://evil.example/"></iframe>'
HOSTILE = f"Sure. {PAYLOAD} " + "filler " * 120 + LATE_PAYLOAD


def claims_per_level(b, per_level: int = 1) -> list[str]:
    out = []
    for level in (1, 2, 3, 4):
        out += [c.claim_id for c in b.claims if c.level == level][:per_level]
    return out


def make_store(
    path: Path,
    b,
    *,
    models=MODELS,
    judges=JUDGES,
    claims=None,
    templates=None,
    samples: int = 2,
    hostile: bool = True,
) -> Path:
    """A small store written row by row: planted outcomes, one failed request, one parse error,
    and (``hostile``) one response and one judge reasoning carrying HTML/script payloads."""
    rng = np.random.default_rng(1)
    claims = claims or claims_per_level(b)
    templates = templates or [t.prompt_id for t in b.templates]
    with Store.open(path) as store:
        store.create_run(
            command="deflectbench run --test",
            benchmark=b.key,
            benchmark_version=b.version,
            benchmark_sha256=b.sha256,
            config={"seed": 7, "models": list(models), "judges": list(judges)},
            versions={"deflectbench": "test"},
        )
        for mi, model in enumerate(models):
            for ci, claim in enumerate(claims):
                for ti, prompt in enumerate(templates):
                    for s in range(1, samples + 1):
                        failed = (mi, ci, ti, s) == (0, 0, 0, 1)
                        store.add_generation(
                            GenerationRecord(
                                benchmark=b.key,
                                model=model,
                                claim_id=claim,
                                prompt_id=prompt,
                                sample=s,
                                prompt=b.render(claim, prompt),
                                response=None if failed else f"A reply about {claim} ({s}).",
                                error="503 overloaded" if failed else None,
                                input_tokens=0 if failed else 100,
                                output_tokens=0 if failed else int(rng.integers(20, 400)),
                                created_at=f"2026-01-0{mi + 1}T10:{ci:02d}:{s:02d}Z",
                            )
                        )
        hostile_id = None
        if hostile:
            store.add_generation(
                GenerationRecord(
                    benchmark=b.key,
                    model=models[-1],
                    claim_id=claims[0],
                    prompt_id=templates[0],
                    sample=samples + 1,
                    prompt=b.render(claims[0], templates[0]),
                    response=HOSTILE,
                    output_tokens=321,
                )
            )
            hostile_id = store.generation_id(
                b.key, models[-1], claims[0], templates[0], samples + 1
            )
        framing = {t.prompt_id: t.framing for t in b.templates}
        rows = store.generation_rows(include_errors=False)
        parse_error_at = rows[3]["gen_id"]
        for row in rows:
            gid = row["gen_id"]
            if gid == hostile_id:
                truth = dict.fromkeys(FIELDS, 0)  # outcome "other": the model's only one
            elif framing[row["prompt_id"]] == "coach":
                truth = {"any_fallacy_present": 1, "WA_present": 1, "fallacy_labeled": 1}
            else:
                r = rng.random()
                truth = (
                    {"refusal": 1}
                    if r < 0.3
                    else {"soft_refusal": 1, "any_fallacy_present": 1, "AH_present": 1}
                    if r < 0.45
                    else {"any_fallacy_present": 1, "RH_present": 1, "compliance_clean": 1}
                )
            for ji, judge in enumerate(judges):
                said = {f: int(truth.get(f, 0)) for f in FIELDS}
                if ji == 1 and rng.random() < 0.05:
                    said["soft_refusal"] = 1 - said["soft_refusal"]
                bad = gid == parse_error_at and ji == 0
                store.add_judgment(
                    JudgmentRecord(
                        gen_id=gid,
                        judge=judge,
                        raw="not json" if bad else json.dumps(said),
                        scores=None if bad else apply_rules(said),
                        said=None if bad else said,
                        reasoning=(PAYLOAD if gid == hostile_id else "Plain reasoning."),
                        parse_error=bad,
                        created_at="2026-01-05T12:00:00Z",
                    )
                )
    return path
