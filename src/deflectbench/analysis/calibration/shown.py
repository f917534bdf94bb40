"""What ``calibrate`` (and ``validate``'s corrected rates) show, as typed values: an estimate as
printed, a model's shift from judged to corrected, its label budget, the Dawid-Skene fit.

Each value carries the numbers exactly as the JSON writes them (rounded once, here) and its
``to_json()`` gives that JSON's keys in their order; the terminal reads the attributes, so a
renamed field is a checker's error, not a blank cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deflectbench.analysis.calibration.budget import LabelNeed  # (defined where it is counted)
from deflectbench.analysis.calibration.notes import HOW_TO_LABEL, no_labels_note

__all__ = [
    "HOW_TO_LABEL",
    "DawidSkeneFit",
    "FieldFit",
    "LabelNeed",
    "ModelBudget",
    "RateEstimate",
    "Shift",
    "clean",
    "no_labels_note",
]


def clean(x: float | None) -> float | None:
    """A number as the JSON writes it: rounded to 6 places, None when missing or not finite."""
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), 6)


@dataclass(frozen=True)
class RateEstimate:
    """One estimate as shown: the rate and its 95% CI (None: undefined), what it rests on, the
    note saying why a number is missing, and the PPI++ lambda when the method has one."""

    rate: float | None
    lo: float | None
    hi: float | None
    n: int
    n_labels: int
    method: str
    note: str | None = None
    #: Whether the estimator reported a lambda (``lam`` None then: it was not finite).
    has_lambda: bool = False
    lam: float | None = None
    #: Why the estimate rests on thin labels (its interval then widened to the exact bound).
    flag: str | None = None

    @classmethod
    def of(cls, e: Any) -> RateEstimate:
        """From an :class:`.estimate.Estimate` (or anything with its attributes)."""
        lo, hi = e.ci95 if e.ci95 is not None else (None, None)
        lam = dict(e.details or {}).get("lam")
        return cls(
            rate=clean(e.rate),
            lo=clean(lo),
            hi=clean(hi),
            n=int(e.n),
            n_labels=int(e.n_labels),
            method=e.method,
            note=e.note or None,
            has_lambda=lam is not None,
            lam=None if lam is None else clean(lam),
            flag=getattr(e, "flag", None) or None,
        )

    def to_json(self) -> dict[str, Any]:
        """``{"rate", "ci95": [lo, hi], "n", "n_labels", "method"}`` (+ ``note``, ``lambda``,
        ``flag``)."""
        out: dict[str, Any] = {
            "rate": self.rate,
            "ci95": [self.lo, self.hi],
            "n": self.n,
            "n_labels": self.n_labels,
            "method": self.method,
        }
        if self.note:
            out["note"] = self.note
        if self.has_lambda:
            out["lambda"] = self.lam
        if self.flag:
            out["flag"] = self.flag
        return out


@dataclass(frozen=True)
class Shift:
    """One model's measure judged and corrected: the PPI++ lambda, how many points the
    correction moved it and whether the judged CI excludes the corrected rate."""

    model: str
    kind: str
    measure: str
    judged: RateEstimate
    corrected: RateEstimate
    lam: float | None
    moved_points: float | None
    judged_ci_excludes_corrected: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "kind": self.kind,
            "measure": self.measure,
            "judged": self.judged.to_json(),
            "corrected": self.corrected.to_json(),
            "lambda": self.lam,
            "moved_points": self.moved_points,
            "judged_ci_excludes_corrected": self.judged_ci_excludes_corrected,
        }


@dataclass(frozen=True)
class ModelBudget:
    """A model's labels now, how many more bring every headline rate's corrected CI within
    the target (None: unreachable), and the rate that needs the most."""

    labels: int
    more_labels: int | None
    labels_needed: int | None
    widest: str | None
    target_half_width: float
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "labels": self.labels,
            "more_labels": self.more_labels,
            "labels_needed": self.labels_needed,
            "widest": self.widest,
            "target_half_width": self.target_half_width,
        }
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class FieldFit:
    """One field's Dawid-Skene fit: the latent prevalence and each judge's (sensitivity,
    specificity); or ``note`` saying why the field could not be fitted."""

    prevalence: float | None = None
    judges: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    note: str | None = None
    #: EM iterations run and whether the posteriors stopped moving (None: not reported).
    iterations: int | None = None
    converged: bool | None = None
    #: Set when the labels show the judges err together (the model assumes they do not).
    correlated: str | None = None

    @property
    def flag(self) -> str | None:
        """Why this fit is not to be read as an estimate (None: nothing seen against it)."""
        if self.correlated:
            return self.correlated
        if self.converged is False:
            return f"EM did not converge in {self.iterations} iterations"
        return None

    def to_json(self) -> dict[str, Any]:
        if self.note is not None:
            return {"note": self.note}
        out: dict[str, Any] = {
            "prevalence": self.prevalence,
            "judges": {
                j: {"sensitivity": sens, "specificity": spec}
                for j, (sens, spec) in self.judges.items()
            },
            "iterations": self.iterations,
            "converged": self.converged,
        }
        if self.flag:
            out["flag"] = self.flag
        return out


@dataclass(frozen=True)
class DawidSkeneFit:
    """The latent-class estimate per field over the judges (``available`` False: ``note``
    says why there is none)."""

    available: bool
    note: str | None = None
    judges: tuple[str, ...] = ()
    fields: Mapping[str, FieldFit] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if not self.available:
            return {"available": False, "note": self.note}
        return {
            "available": True,
            "judges": list(self.judges),
            "fields": {f: fit.to_json() for f, fit in self.fields.items()},
        }
