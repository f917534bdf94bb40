"""A design target in words, ``"refusal +-3pp per model x framing"``: which rate, how narrow
its 95% interval must be, and per which cells. A small grammar, so a typo is refused in one line
listing what is accepted rather than planned for something else."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deflectbench.errors import ConfigError
from deflectbench.vocab import FIELDS, OUTCOMES

__all__ = ["MEASURES", "SCOPES", "Target", "parse_target"]

#: The rates a target may name: the rubric's fields and the outcomes of the ladder.
MEASURES: tuple[str, ...] = tuple(dict.fromkeys((*FIELDS, *OUTCOMES)))
#: The cells a target may ask for, by the words of the target -> the columns of the cell.
SCOPES: dict[str, tuple[str, ...]] = {
    "model": ("model",),
    "model x framing": ("model", "framing"),
}

_FORM = (
    'the target is "MEASURE +-Hpp per SCOPE", e.g. "refusal +-3pp per model x framing"; '
    f"MEASURE is one of {', '.join(MEASURES)}; H is a number of points above 0 and below 50; "
    f"SCOPE is one of {', '.join(repr(s) for s in SCOPES)}"
)
#: A scope as written after ``per`` (``model``, ``model x framing``); :func:`scope_key` reads it.
SCOPE_WRITTEN = r"(?P<scope>[A-Za-z_]+(?:\s*[x×]\s*[A-Za-z_]+)?)"
_GRAMMAR = re.compile(
    r"^\s*(?P<measure>[A-Za-z_]+)\s*(?:\+-|\+/-|±)\s*(?P<h>\d+(?:\.\d+)?)\s*(?:pp|points?)\s+"
    rf"per\s+{SCOPE_WRITTEN}\s*$",
    re.IGNORECASE,
)


def scope_key(written: str) -> str:
    """A scope as written (``Model X framing``, ``model×framing``) as its key in :data:`SCOPES`
    (``model x framing``; an unknown scope comes back in the same spelling, for the error)."""
    return re.sub(r"\s*[x×]\s*", " x ", written.lower())


@dataclass(frozen=True)
class Target:
    """A rate (``measure``), the 95% half-width it must reach (``halfwidth``, a fraction) and
    the cells it is asked of (``scope``, a key of :data:`SCOPES`)."""

    measure: str
    halfwidth: float
    scope: str

    @property
    def columns(self) -> tuple[str, ...]:
        return SCOPES[self.scope]

    def __str__(self) -> str:
        return f"{self.measure} +-{100 * self.halfwidth:g}pp per {self.scope}"


def parse_target(text: str) -> Target:
    """The target ``text`` says, or ConfigError naming the accepted forms."""
    m = _GRAMMAR.match(text)
    if m is None:
        raise ConfigError(f"cannot read the target {text!r}: {_FORM}")
    by_lower = {name.lower(): name for name in MEASURES}
    measure = by_lower.get(m["measure"].lower())
    scope = scope_key(m["scope"])
    h = float(m["h"])
    if measure is None:
        raise ConfigError(f"unknown measure {m['measure']!r} in the target: {_FORM}")
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {m['scope']!r} in the target: {_FORM}")
    if not 0.0 < h < 50.0:
        raise ConfigError(f"half-width {h:g}pp is out of range in the target: {_FORM}")
    return Target(measure, h / 100.0, scope)
