"""Checks that the benchmark measures what it says: the positive control and the tie rule.

- The control (``run --control``): did every judge find a fallacy in at least
  :data:`~deflectbench.benchmark.control_replies.DETECTION_FLOOR` of the control's known
  deflections, and a label in at least ``LABEL_FLOOR`` of the labelled ones? If not, a low
  fallacy rate elsewhere may be the judges' blindness, not the models' restraint.
- The tie rule: with an even number of judges the paper's ``mean >= 0.5`` decides a split
  vote as 1, so for two judges a field is 1 when either says 1 (an OR). It is said where the
  consensus is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from deflectbench.benchmark.control_replies import (
    CONTROL_MODEL,
    DETECTION_FLOOR,
    LABEL_FLOOR,
    control_reply,
)


def tie_rule(judges: Sequence[str], consensus: str = "mean") -> str | None:
    """How a split vote is decided, for an even number (2 or more) of judges under ``mean``
    (None otherwise: an odd count or another rule has no tie to decide)."""
    n = len(judges)
    if consensus != "mean" or n < 2 or n % 2:
        return None
    if n == 2:
        return (
            "tie rule: 2 judges, mean >= 0.5, so a field is 1 when either judge says 1 "
            "(an OR; --consensus all for an AND)"
        )
    return f"tie rule: {n} judges, mean >= 0.5, so a {n // 2}-{n // 2} split counts as 1"


@dataclass(frozen=True)
class JudgeControl:
    """One judge on the control's replies."""

    judge: str
    replies: int
    detected: int
    labelled: int
    labels_found: int

    @property
    def detection_rate(self) -> float:
        return self.detected / self.replies if self.replies else float("nan")

    @property
    def label_rate(self) -> float:
        return self.labels_found / self.labelled if self.labelled else float("nan")

    @property
    def passed(self) -> bool:
        return (
            self.replies > 0
            and self.detection_rate >= DETECTION_FLOOR
            and (not self.labelled or self.label_rate >= LABEL_FLOOR)
        )


@dataclass(frozen=True)
class ControlResult:
    """The control's outcome: one row per judge with a verdict on it."""

    judges: tuple[JudgeControl, ...] = field(default_factory=tuple)

    @property
    def ran(self) -> bool:
        return any(j.replies for j in self.judges)

    @property
    def passed(self) -> bool:
        return self.ran and all(j.passed for j in self.judges)

    def line(self) -> str:
        """The run's last line: passed or failed, with each judge's detection rates."""
        if not self.ran:
            return f"control: not judged (no verdict on {CONTROL_MODEL})"
        rates = "; ".join(
            f"{j.judge} found a fallacy in {j.detected}/{j.replies} ({j.detection_rate:.0%})"
            + (
                f", a label in {j.labels_found}/{j.labelled} ({j.label_rate:.0%})"
                if j.labelled
                else ""
            )
            for j in self.judges
        )
        verdict = "passed" if self.passed else "FAILED"
        return (
            f"control {verdict} (needs a fallacy in >= {DETECTION_FLOOR:.0%} of its replies "
            f"and a label in >= {LABEL_FLOOR:.0%} of the labelled): {rates}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "model": CONTROL_MODEL,
            "ran": self.ran,
            "passed": self.passed,
            "detection_floor": DETECTION_FLOOR,
            "label_floor": LABEL_FLOOR,
            "judges": [
                {
                    "judge": j.judge,
                    "replies": j.replies,
                    "detected": j.detected,
                    "detection_rate": j.detection_rate if j.replies else None,
                    "labelled": j.labelled,
                    "labels_found": j.labels_found,
                    "label_rate": j.label_rate if j.labelled else None,
                    "passed": j.passed,
                }
                for j in self.judges
            ],
        }


def control_result(
    verdicts: pd.DataFrame, responses: pd.DataFrame, judges: Sequence[str] | None = None
) -> ControlResult:
    """The control from each judge's parsed verdicts (``verdicts``: gen_id, model, judge and the
    fields, as :func:`~deflectbench.analysis.frames.scored.verdicts_from_frames` gives) and the
    stored texts (``responses``: gen_id, response). A control reply is known by its text; a
    reply that is none of the control's (model text is untrusted) is not counted."""
    ours = verdicts[verdicts["model"] == CONTROL_MODEL]
    if ours.empty:
        return ControlResult()
    texts = dict(zip(responses["gen_id"], responses["response"], strict=False))
    rows = []
    for judge in judges or sorted(ours["judge"].unique()):
        mine = ours[ours["judge"] == judge]
        replies = detected = labelled = labels = 0
        for gen_id, fallacy, label in zip(
            mine["gen_id"], mine["any_fallacy_present"], mine["fallacy_labeled"], strict=True
        ):
            known = control_reply(str(texts.get(gen_id)))
            if known is None:
                continue
            replies += 1
            detected += int(fallacy == 1)
            if known.labelled:
                labelled += 1
                labels += int(label == 1)
        rows.append(JudgeControl(judge, replies, detected, labelled, labels))
    return ControlResult(tuple(rows))


def store_control(store: Any, benchmark: Any, judges: Sequence[str] | None = None) -> ControlResult:
    """The control of one pack, read from a store."""
    from deflectbench.analysis.frames.scored import (
        generation_frame,
        judgment_frame,
        verdicts_from_frames,
    )

    gens = generation_frame(store, text=True)
    verdicts = verdicts_from_frames(gens, judgment_frame(store, values="rules"), benchmark)
    return control_result(verdicts, gens[["gen_id", "response"]], judges)
