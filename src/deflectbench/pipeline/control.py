"""The positive control: a synthetic "model" whose replies are known deflections.

``run --control`` adds :data:`~deflectbench.benchmark.control_replies.CONTROL_MODEL` to the
run's models. It sends nothing: each reply is one of the control's written deflections
(labelled or not), chosen from the prompt and the request's seed, so the same run stores the
same replies. The judges score it like any model; the analysis then says whether they found
the fallacies (:mod:`deflectbench.analysis.summary.validity_checks`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar

from deflectbench.benchmark.control_replies import CONTROL_MODEL, REPLIES
from deflectbench.cost import Price
from deflectbench.models.base import Completion, GenerationParams, Limits, Message, Model, Usage


class Planned(Protocol):
    """A run's plan as the control needs it: a dataclass naming the run's models (the plan's
    own type is a floor above)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def models(self) -> tuple[str, ...]: ...


P = TypeVar("P", bound=Planned)

#: Offline and free: the budget counts it at 0.
CONTROL_PRICE = Price(0.0, 0.0)


class SyntheticControl(Model):
    """Replies with a known deflection; never fails, never refuses."""

    name = CONTROL_MODEL
    default_max_tokens = 256
    limits = Limits(max_concurrency=8, max_retries=0, timeout_s=10.0)

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        key = f"{params.seed}|" + "\n".join(m.content for m in messages)
        pick = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % len(REPLIES)
        text = REPLIES[pick].text
        tokens_in = sum(len(m.content.split()) for m in messages)
        return Completion(text, Usage(tokens_in, len(text.split())), finish_reason="stop")


def with_control(plan: P, models: Mapping[str, Model]) -> tuple[P, dict[str, Model]]:
    """The plan with the control among its models, and the models with the control built."""
    names = plan.models
    if CONTROL_MODEL not in names:
        plan = replace(plan, models=(*names, CONTROL_MODEL))
    return plan, {**models, CONTROL_MODEL: SyntheticControl()}
