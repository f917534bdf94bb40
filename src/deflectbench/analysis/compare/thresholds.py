"""The regression gate's rules: ``--fail-if "refusal < -5pp"``, ``--fail-if "refusal drop >
5pp"``, ``--require "|refusal| < 5pp"``, checked against a comparison table.

A rule splits the change (new minus baseline, in points) at a threshold into a side that holds
"no change" (the pass side) and one that does not (the fail side). ``--fail-if`` writes the fail
side, ``--require`` the pass side; a rule whose written side does not fit its flag (``--fail-if
"refusal < 5pp"``: a fail side holding no change at all, which would fail two identical stores)
is refused with the accepted forms, so a sign can never be read the other way round:

=========================  ===================================================  ==============
written                    the change fails when its whole 95% CI lies          flag
=========================  ===================================================  ==============
``M < -Npp``               below -N (a fall of more than N points)               ``--fail-if``
``M drop > Npp``           below -N                                              ``--fail-if``
``M > +Npp``, ``M > Npp``  above +N (a rise of more than N points)               ``--fail-if``
``M rise > Npp``           above +N                                              ``--fail-if``
``|M| > Npp``              below -N or above +N                                  ``--fail-if``
``M > -Npp``               below -N (the change must stay above -N)              ``--require``
``M drop < Npp``           below -N (the fall must stay under N)                 ``--require``
``M < +Npp``, ``M < Npp``  above +N                                              ``--require``
``M rise < Npp``           above +N                                              ``--require``
``|M| < Npp``              below -N or above +N                                  ``--require``
=========================  ===================================================  ==============

A rule fails only when the difference's whole CI lies on the fail side of the threshold: a
point estimate past the line with an interval that crosses it is noise the gate cannot tell
from no change, so it passes. A rule that *could not be tested* on a pair is never a pass: the
difference has no interval (fewer than two claims in common), the scope was not compared for
that pair (a side lacks the template), or no result could reach the fail side (the baseline's
rate leaves less room than the threshold: ``refusal < -5pp`` on a baseline refusing 3%, or on
so few claims that even a fall to 0% has a CI reaching above -5 points). Such a rule is a
:class:`NotTested` row, and the gate does not pass unless the user allows it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from deflectbench.analysis.compare.table import MEASURES
from deflectbench.errors import ConfigError, did_you_mean
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "FAIL_IF",
    "GATE_FAILED",
    "REQUIRE",
    "Failure",
    "NotTested",
    "Threshold",
    "ThresholdError",
    "check_rules",
    "check_thresholds",
    "parse_threshold",
]

#: The exit code of a gate that did not pass: a rule failed, a rule could not be tested, or a
#: baseline model was absent from the new side (README: exit codes).
GATE_FAILED = 6
#: The two ways to give a rule: it says when to fail, or what must hold.
FAIL_IF, REQUIRE = "--fail-if", "--require"

_PATTERN = re.compile(
    r"^\s*(\|)?\s*(?:(outcome|field):)?([A-Za-z_]+)\s*(\|)?\s*(?:\b(drop|rise)\b)?\s*"
    r"(<=|>=|=<|=>|==|<|>|=)\s*([+-]?)\s*(\d+(?:\.\d+)?)\s*pp"
    r"\s*(?:@\s*([A-Za-z0-9_.\-]+))?\s*$"
)
SYNTAX = (
    "--fail-if 'MEASURE < -5pp' | 'MEASURE drop > 5pp' | 'MEASURE > +3pp' | 'MEASURE rise > 3pp' "
    "| '|MEASURE| > 5pp', or --require 'MEASURE drop < 5pp' | 'MEASURE > -5pp' | "
    "'|MEASURE| < 5pp' | 'MEASURE rise < 3pp' | 'MEASURE < +3pp' (points, new minus "
    "baseline), optionally @FRAMING or @TEMPLATE"
)


class ThresholdError(ConfigError):
    """A rule that cannot be read, reads both ways, or names nothing in the comparison."""


@dataclass(frozen=True)
class Threshold:
    """One rule as read: a measure (``kind`` outcome or field), the side of the change that
    fails (``fails``: ``below`` -N, ``above`` +N, or ``either``), N in points (``points`` >= 0),
    where (``scope``: None overall, else a framing or a template) and how it was given
    (``flag``: ``--fail-if`` or ``--require``)."""

    text: str
    kind: str
    measure: str
    fails: str
    points: float
    scope: str | None = None
    flag: str = FAIL_IF

    @property
    def limit(self) -> float:
        """N as a fraction."""
        return self.points / 100.0

    @property
    def op(self) -> str:
        """``<`` when a fall fails the rule, ``>`` when a rise does (``|`` either)."""
        return {"below": "<", "above": ">"}.get(self.fails, "|")

    @property
    def given(self) -> str:
        """The rule as the user gave it: ``--fail-if 'refusal < -5pp'``."""
        return f"{self.flag} {self.text!r}"

    @property
    def where(self) -> str:
        """``overall``, or ``@`` and the framing or template."""
        return "overall" if self.scope is None else f"@{self.scope}"

    def meaning(self) -> str:
        """What fails, in words: ``fails when refusal's change lies wholly below -5 pp``."""
        below, above = f"below -{self.points:g} pp", f"above +{self.points:g} pp"
        sides = {"below": below, "above": above, "either": f"{below} or {above}"}[self.fails]
        return f"fails when {self.measure} {self.where} changes wholly {sides}"


def _ambiguous(text: str, flag: str, why: str) -> ThresholdError:
    return ThresholdError(f"{flag} {text!r}: {why}; accepted forms: {SYNTAX}")


def _region(
    text: str, flag: str, op: str, sign: str, number: float, word: str | None, absolute: bool
) -> tuple[str, str]:
    """(the side written: ``below``/``above``/``either`` for a fail side, ``inside`` for a
    pass side, its meaning as the flag needs it) -> the fail side, or an error naming why."""
    if op in ("<=", ">=", "=<", "=>", "==", "="):
        raise _ambiguous(text, flag, f"{op!r} is not a comparison the gate reads (use < or >)")
    if (word or absolute) and sign:
        raise _ambiguous(
            text, flag, "a drop, a rise or |change| is a size: write it without a sign"
        )
    if absolute and word:
        raise _ambiguous(text, flag, "write either |MEASURE| or MEASURE drop/rise, not both")
    # The side written, as a region of the change d (in points): below x, above x, or |d|.
    if absolute:
        written, x = ("outside" if op == ">" else "inside"), number
    elif word == "drop":  # drop = -d: "drop > N" is d < -N, "drop < N" is d > -N
        written, x = ("below" if op == ">" else "above"), -number
    elif word == "rise":
        written, x = ("above" if op == ">" else "below"), number
    else:
        written, x = ("below" if op == "<" else "above"), (-number if sign == "-" else number)
    holds_zero = {
        "below": x > 0,
        "above": x < 0,
        "inside": number > 0,
        "outside": False,
    }[written]
    excludes_zero = {
        "below": x <= 0,
        "above": x >= 0,
        "inside": False,
        "outside": True,
    }[written]
    if flag == FAIL_IF:
        if not excludes_zero:
            raise _ambiguous(
                text, flag,
                "this would fail on no change at all (a --fail-if rule says when to FAIL); for "
                "a bound the change must stay within use --require with the same words",
            )  # fmt: skip
        return ("either" if written == "outside" else written), f"{x:+g}"
    if not holds_zero:
        raise _ambiguous(
            text, flag,
            "no change at all would break this (a --require rule says what must HOLD); to "
            "say when to fail use --fail-if",
        )  # fmt: skip
    if written == "inside":
        return "either", f"{number:g}"
    return ("above" if written == "below" else "below"), f"{x:+g}"


def parse_threshold(text: str, flag: str = FAIL_IF) -> Threshold:
    """A rule (see the module's table); an outcome's name means the outcome
    (``field:soft_refusal`` names the field where the two share a name). ``flag`` says how it
    was given: ``--fail-if`` (the written side fails) or ``--require`` (the written side must
    hold). A rule that cannot be read, or whose written side does not fit its flag, is a
    one-line :class:`ThresholdError` showing the accepted forms."""
    if flag not in (FAIL_IF, REQUIRE):
        raise ValueError(f"flag must be {FAIL_IF} or {REQUIRE}")
    m = _PATTERN.match(text)
    if not m:
        raise ThresholdError(f"{flag} {text!r}: expected {SYNTAX}")
    bar1, kind, measure, bar2, word, op, sign, number, scope = m.groups()
    if bool(bar1) != bool(bar2):
        raise ThresholdError(f"{flag} {text!r}: an unclosed |...|; expected {SYNTAX}")
    if kind is None:
        kind = "outcome" if measure in OUTCOMES else "field" if measure in FIELDS else None
    names = OUTCOMES if kind == "outcome" else FIELDS if kind == "field" else MEASURES
    if kind is None or measure not in names:
        raise ThresholdError(
            f"{flag} {text!r}: unknown measure {measure!r}{did_you_mean(measure, names)}; "
            f"outcomes: {', '.join(OUTCOMES)}; fields: {', '.join(FIELDS)}"
        )
    fails, _ = _region(text, flag, op, sign, float(number), word, bool(bar1))
    points = abs(float(number))
    return Threshold(text.strip(), kind, measure, fails, points, scope, flag)


@dataclass(frozen=True)
class RuleOnPair:
    """A rule's outcome on one pair (``model_b`` against the baseline ``model_a``)."""

    threshold: Threshold
    model_a: str
    model_b: str

    @property
    def subject(self) -> str:
        """``refusal @coach, NEW vs baseline OLD``: the rule's rate, where, on which pair."""
        t = self.threshold
        return f"{t.measure} {t.where}, {self.model_b} vs baseline {self.model_a}"


@dataclass(frozen=True)
class Failure(RuleOnPair):
    """A rule a difference's CI lies wholly beyond (on its fail side)."""

    diff: float
    ci_lo: float
    ci_hi: float

    def line(self) -> str:
        t = self.threshold
        below = self.ci_hi < -t.limit if t.fails == "either" else t.fails == "below"
        bound = f"{-t.points if below else t.points:+g}"
        return (
            f"fail: {self.subject}: "
            f"{self.diff * 100:+.1f} pp (95% CI {self.ci_lo * 100:+.1f} to {self.ci_hi * 100:+.1f})"
            f" lies wholly {'below' if below else 'above'} {bound} pp ({t.given})"
        )


@dataclass(frozen=True)
class NotTested(RuleOnPair):
    """A rule that could not be tested on a pair, and why: never a pass."""

    why: str

    def line(self) -> str:
        return f"not tested: {self.subject}: {self.why} ({self.threshold.given})"


def _rows(table: pd.DataFrame, t: Threshold) -> pd.DataFrame:
    mine = table[(table["kind"] == t.kind) & (table["measure"] == t.measure) & ~table["corrected"]]
    if t.scope is None:
        return mine[mine["scope"] == "overall"]
    if t.scope in FRAMINGS:
        return mine[(mine["scope"] == "framing") & (mine["framing"] == t.scope)]
    return mine[(mine["scope"] == "template") & (mine["template"] == t.scope)]


def _untestable(t: Threshold, r: pd.Series) -> str | None:
    """Why the row cannot test the rule, or None. Without an interval nothing can fail; and
    when even the most extreme new side (every answer 0, or every answer 1, for this measure)
    would leave the CI short of the threshold, no result could fail it."""
    lo, hi = float(r["ci_lo"]), float(r["ci_hi"])
    if math.isnan(lo) or math.isnan(hi):
        n = int(r["n_claims"]) if not pd.isna(r["n_claims"]) else 0
        return f"no 95% CI ({n} claim{'s' if n != 1 else ''} on both sides; an interval needs 2)"
    rate = float(r["rate_a"])
    a_lo = float(r["a_lo"]) if "a_lo" in r and not pd.isna(r["a_lo"]) else rate
    a_hi = float(r["a_hi"]) if "a_hi" in r and not pd.isna(r["a_hi"]) else rate
    eps = 1e-12
    can_fall = -a_lo < -t.limit - eps  # the new side at 0%: CI upper end -a_lo
    can_rise = 1.0 - a_hi > t.limit + eps  # the new side at 100%: CI lower end 1 - a_hi
    reach = {
        "below": can_fall,
        "above": can_rise,
        "either": can_fall or can_rise,
    }[t.fails]
    if reach:
        return None
    room = {
        "below": f"even a fall to 0% would leave the CI above -{t.points:g} pp",
        "above": f"even a rise to 100% would leave the CI below +{t.points:g} pp",
        "either": f"no result could put the CI beyond {t.points:g} pp either way",
    }[t.fails]
    return f"the baseline's rate {rate * 100:.1f}% ({int(r['n_claims'])} claims): {room}"


def check_rules(
    table: pd.DataFrame,
    thresholds: Sequence[Threshold],
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    templates: Collection[str] = (),
) -> tuple[list[Failure], list[NotTested]]:
    """Every (rule, pair) whose CI lies wholly on the rule's fail side, and every one that
    could not be tested. ``pairs`` are the compared (A, B) labels (default: the table's);
    ``templates`` the template ids of the packs compared: a rule @TEMPLATE that names one not
    compared for a pair is not tested, one that names nothing known is a
    :class:`ThresholdError` (a typo must not pass the gate)."""
    if pairs is None:
        pairs = list(dict.fromkeys(zip(table["model_a"], table["model_b"], strict=True)))
    failures: list[Failure] = []
    untested: list[NotTested] = []
    for t in thresholds:
        rows = _rows(table, t)
        known = set(templates) | set(table["template"].dropna())
        if rows.empty and (t.scope is not None and t.scope not in {*FRAMINGS, *known}):
            names = sorted(known)
            raise ThresholdError(
                f"{t.given}: nothing compared at @{t.scope}"
                f"{did_you_mean(str(t.scope), [*FRAMINGS, *names])}; "
                f"use a framing ({', '.join(FRAMINGS)}) or a template id of the pack"
            )
        for a, b in pairs:
            mine = rows[(rows["model_a"] == a) & (rows["model_b"] == b)]
            if mine.empty:
                untested.append(NotTested(t, a, b, "not compared for this pair (a side lacks it)"))
                continue
            r = mine.iloc[0]
            why = _untestable(t, r)
            if why is not None:
                untested.append(NotTested(t, a, b, why))
                continue
            lo, hi = float(r["ci_lo"]), float(r["ci_hi"])
            below, above = hi < -t.limit, lo > t.limit
            hit = {"below": below, "above": above, "either": below or above}[t.fails]
            if hit:
                failures.append(Failure(t, a, b, float(r["diff"]), lo, hi))
    return failures, untested


def check_thresholds(table: pd.DataFrame, thresholds: Sequence[Threshold]) -> list[Failure]:
    """Every (rule, pair) whose CI lies wholly on the rule's fail side (:func:`check_rules`'
    failures; the rules that could not be tested are its second list)."""
    return check_rules(table, thresholds)[0]
