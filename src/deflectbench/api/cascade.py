"""Cascaded judging for ``judge`` and ``run``: a cheap judge on every answer, the expensive judges
on a seeded sample (docs/cascade.md).

:func:`cascade_ask` checks the four settings (``cheap_judge``, ``expensive_share``,
``expensive_target``, ``stratify``) and says in one line what is wrong; :func:`settle_design`
turns them into the pack's stored design (a new one, or the stored one resumed or extended:
the same cheap and expensive judges, seed, strata and target, a share only ever growing, so no
judged answer falls out of the sample and none is judged twice); :func:`sampled_ids` gives the
answers the expensive judges see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.analysis.plan.target import Target
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store
    from deflectbench.store.cascade import CascadeDesign

__all__ = ["CascadeAsk", "cascade_ask", "sampled_ids", "settle_design"]


@dataclass(frozen=True)
class CascadeAsk:
    """What a command asked of a cascade (checked): the cheap judge, a share or a target, the
    strata and the seed."""

    cheap: str
    share: float | None
    target: Target | None
    stratify: str
    seed: int


def cascade_ask(
    cheap: str | None,
    share: float | None,
    target: str | None,
    stratify: str | None,
    seed: int,
    expensive: Sequence[str],
) -> CascadeAsk | None:
    """The checked cascade settings, None when none is given; ConfigError naming the flag."""
    if cheap is None:
        given = [n for n, v in (("share", share), ("target", target), ("stratify", stratify)) if v]
        if given:
            raise ConfigError(
                f"--{'expensive-' if given[0] != 'stratify' else ''}{given[0]} is cascaded "
                "judging's: give --cheap-judge too (the judge that scores every answer)"
            )
        return None
    # only now: the analysis (pandas, scipy) must not load before a plain run's first request
    from deflectbench.analysis.cascade.target import STRATA_OF_SCOPE
    from deflectbench.analysis.plan.target import parse_target
    from deflectbench.store.cascade import STRATIFY

    if (share is None) == (target is None):
        raise ConfigError(
            "--cheap-judge needs --expensive-share (e.g. 0.1) or --expensive-target "
            '(e.g. "refusal +-3pp per model"), one of them'
        )
    if share is not None and not 0.0 < share <= 1.0:
        raise ConfigError(f"--expensive-share {share:g}: give a share above 0 and at most 1")
    if stratify is not None and stratify not in STRATIFY:
        raise ConfigError(f"--stratify {stratify!r}: give one of {', '.join(STRATIFY)}")
    others = [j for j in expensive if j != cheap]
    if cheap in expensive or not others:
        raise ConfigError(
            f"--cheap-judge {cheap} is also a judge: the expensive judges (--judge) are the "
            "others, and at least one is needed"
        )
    parsed = None
    strata = stratify or "none"
    if target is not None:
        text = target if " per " in f" {target.lower()} " else f"{target} per model"
        parsed = parse_target(text)
        strata = STRATA_OF_SCOPE[parsed.scope]
        if stratify is not None and stratify != strata:
            raise ConfigError(
                f"--stratify {stratify} and --expensive-target per {parsed.scope}: the target's "
                "cells are the strata; leave --stratify out"
            )
    return CascadeAsk(cheap, share, parsed, strata, seed)


def _framing_of(b: Benchmark) -> Callable[[str], str | None]:
    def framing(prompt_id: str) -> str | None:
        try:
            return b.template(prompt_id).framing
        except KeyError:
            return None

    return framing


def _describe(d: CascadeDesign) -> str:
    how = f"target {d.target}" if d.target else f"share {d.default:g}"
    return (
        f"cheap judge {d.cheap}, judges {', '.join(d.expensive)}, seed {d.seed}, "
        f"stratify {d.stratify}, {how}"
    )


def settle_design(
    store: Store, b: Benchmark, ask: CascadeAsk, expensive: Sequence[str]
) -> CascadeDesign:
    """The pack's design for ``ask``: new, or the stored one resumed or extended (the module
    docstring), stored before any expensive request; ConfigError when ``ask`` would draw
    another sample than the stored design drew."""
    from deflectbench.store.cascade import (
        CascadeDesign,
        cascade_sample,
        load_cascade,
        save_cascade,
    )

    asked = CascadeDesign(
        cheap=ask.cheap,
        expensive=tuple(j for j in expensive if j != ask.cheap),
        seed=ask.seed,
        stratify=ask.stratify,
        default=1.0 if ask.share is None else float(ask.share),
        target=None if ask.target is None else str(ask.target),
    )
    stored = load_cascade(store, b.key)
    if stored is not None and not stored.same_sample_as(asked):
        raise ConfigError(
            f"this pack was judged in cascade with {_describe(stored)}; asked: "
            f"{_describe(asked)}. Give the stored settings to resume or extend it, or judge "
            "into a new results file"
        )
    if stored is not None and ask.share is not None and ask.share < stored.default:
        raise ConfigError(
            f"this pack's cascade samples a share of {stored.default:g}: a smaller one would "
            f"leave judged answers out of the sample; give --expensive-share {stored.default:g} "
            "or more"
        )
    design = asked
    if ask.target is not None:
        from deflectbench.analysis.cascade.target import target_shares

        strata = {g: h for g, (h, _) in cascade_sample(store, b.key, asked, _framing_of(b)).items()}
        known = dict(stored.shares) if stored is not None else {}
        fresh = {h: s for h, s in target_shares(store, b, ask.cheap, ask.target, strata).items()}
        # a stratum sized before keeps its share (its sample stays what it was)
        design = replace(asked, default=1.0, shares={**fresh, **known})
    save_cascade(store, b.key, design)
    return design


def sampled_ids(store: Store, b: Benchmark, design: CascadeDesign) -> frozenset[int]:
    """The pack's answers (gen_ids) the expensive judges see."""
    from deflectbench.store.cascade import cascade_sample

    sample = cascade_sample(store, b.key, design, _framing_of(b))
    return frozenset(g for g, (_, inside) in sample.items() if inside)
