"""Conditions: the settings that change what a model is asked or how it samples.

A result's identity is (benchmark, model, condition, claim, template, sample). Two runs with the
same settings share a condition and resume each other; a changed temperature, max_tokens, seed
policy, extra parameter or benchmark content is another condition, stored beside the first and
told apart everywhere by its label. A label is the user's (``--label``) or derived from the
settings; within one model a label names exactly one set of settings and back.

Ground floor: imports nothing of the package.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Labels the store gives rows it did not sample itself.
LEGACY = "legacy"  # sampled before settings were recorded (a store older than conditions)
RELEASE = "release"  # imported from files
RESERVED = frozenset({LEGACY, RELEASE})
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=+-]{0,63}$")


class ConditionError(ValueError):
    """A label that is malformed, reserved, or already names other settings."""


def check_label(label: str) -> str:
    if label in RESERVED:
        raise ConditionError(
            f"--label {label!r} is reserved for rows the store did not sample; choose another"
        )
    if not _LABEL.match(label):
        raise ConditionError(
            f"--label {label!r}: use 1-64 letters, digits and . _ = + - (starting with a letter "
            "or digit)"
        )
    return label


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Settings:
    """Everything that changes what a subject model is asked or how it samples."""

    temperature: float
    max_tokens: int
    #: The base seed each cell's seed derives from (None: no seed).
    seed: int | None
    benchmark_sha256: str
    #: Whether the seed is sent to the provider (``send_seed``); local models always use it.
    send_seed: bool = True
    #: Extra request parameters (``extra_body``): only their names and a digest of the values
    #: are kept, because values can hold credentials.
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The benchmark pack when it is not the paper's: named in the default label (its content
    #: is already in ``benchmark_sha256``), so one model's runs of two packs get two labels.
    pack: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "temperature": float(self.temperature),
            "max_tokens": int(self.max_tokens),
            "seed": self.seed,
            "send_seed": bool(self.send_seed),
            "extra_names": sorted(self.extra),
            "extra_sha256": _digest(dict(self.extra)) if self.extra else None,
            "benchmark_sha256": self.benchmark_sha256,
        }

    @property
    def sha256(self) -> str:
        return _digest(self.as_json())

    def label(self) -> str:
        """A readable default label, e.g. ``temp1-max256-seed0`` (``-x`` and a digest when extra
        parameters are set). The benchmark's content is in the settings, not the label: a
        changed benchmark under the same label is refused, never mixed."""
        parts = [f"temp{self.temperature:g}", f"max{self.max_tokens}"]
        parts.append("noseed" if self.seed is None or not self.send_seed else f"seed{self.seed}")
        if self.extra:
            parts.append("x" + _digest(dict(self.extra))[:6])
        if self.pack:
            parts.append(re.sub(r"[^A-Za-z0-9._=+-]", "_", self.pack))
        return "-".join(parts)[:64]


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The settings that differ, as ``key old -> new`` (for the refusal message)."""
    keys = sorted(set(old) | set(new))
    diffs = [f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return ", ".join(diffs) or "none"
