"""The rules every record meets before it enters the store, whatever its way in.

A provider reply, a batch line, a release file, a Hugging Face folder, an Inspect log and a
label file each bring records from outside; each calls these functions, and none keeps a rule
of its own, so "is this usage a non-negative whole number?" has one answer everywhere. The
rules take plain values and records (ground floor: it imports nothing of the package, so the
store, the pipeline and every importer can call it; records are read by attribute, the rubric's
field names passed in), raise :class:`GateError` with a one-line message naming the field, and
never change a value: a record passes as it is or is refused.
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: Most tokens one request may report using (input or output): far above any context window,
#: far below what SQLite's 64-bit integers or a float price could overflow on.
MAX_TOKENS = 100_000_000
#: Highest sample number (a run's ``--runs`` is at most 100; imports keep their own numbering).
MAX_SAMPLE = 1_000_000
#: Most one request may cost, in USD.
MAX_COST_USD = 1_000_000.0
#: Longest prompt, reply, error or judge reply kept (a reply is KBs; 300 MB is an attack).
MAX_TEXT_CHARS = 4_000_000
#: Longest note of a human label.
MAX_NOTE_CHARS = 100_000
#: Longest id (model, claim, template, condition, judge).
MAX_ID_CHARS = 256
#: The values a verdict field may hold besides None: 0, 1 and -1, missing (the vocabulary's
#: ``MISSING``, the release's "not given").
SAID_VALUES = (-1, 0, 1)
#: What a human label's field may hold besides None (missing).
VERDICT_VALUES = (0, 1)
#: Unicode categories an id may not hold: controls, format characters (zero-width space,
#: bidi overrides), unassigned, private use, line and paragraph separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})


class GateError(ValueError):
    """One record's problem, as one line without its location (the caller adds ``file:line``)."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- plain values -------------------------------------------------------------------------------


def whole_number(value: Any, name: str, low: int = 0, high: int = MAX_SAMPLE) -> int:
    """``value`` as an int when it is a whole number in ``[low, high]``: an int (never a bool),
    an integral finite float (``2.0``), or a string of ASCII digits. ``1.9``, ``inf``, ``-1``,
    ``True`` and ``"²"`` are refused."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        number = ascii_int(value)
        if number is None:
            text = value.strip()
            try:
                as_float = float(text) if text.isascii() else math.nan
            except ValueError:
                as_float = math.nan
            if math.isfinite(as_float) and as_float.is_integer():
                number = int(as_float)
    if number is None:
        raise GateError(f"{name} must be a whole number, got {_short(value)}")
    if not low <= number <= high:
        raise GateError(f"{name} must be from {low:,} to {high:,}, got {_short(value)}")
    return number


def ascii_int(text: str) -> int | None:
    """An optionally signed run of ASCII digits as an int, else None. ``str.isdigit`` accepts
    superscripts (``"²"``) that ``int`` then refuses; this never does."""
    body = text.strip()
    digits = body[1:] if body[:1] in "+-" else body
    if not digits or len(digits) > 30 or not all("0" <= ch <= "9" for ch in digits):
        return None
    return int(body)


def ascii_natural(text: str) -> int | None:
    """A query-string or header number: 1 to 19 ASCII digits, nothing else (no sign, no
    spaces, no superscripts, no other scripts' digits), else None."""
    if not 0 < len(text) <= 19 or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def sample(value: Any) -> int:
    """A sample (the release's run) number: a whole number from 0 to :data:`MAX_SAMPLE`."""
    return RULES["sample"].check(value, "sample")


def tokens(value: Any, name: str = "token usage") -> int:
    """Token usage: a whole number from 0 to :data:`MAX_TOKENS` (None counts as 0)."""
    return 0 if value is None else TOKENS.check(value, name)


def reply_usage(input_tokens: Any, output_tokens: Any) -> tuple[int, int]:
    """A reply's usage as a provider reported it: both whole numbers from 0 to
    :data:`MAX_TOKENS`; the message says it is the reply's usage."""
    try:
        return tokens(input_tokens, "input_tokens"), tokens(output_tokens, "output_tokens")
    except GateError as exc:
        raise GateError(f"the reply's usage is out of range: {exc}") from None


def cost(value: Any, name: str = "cost_usd") -> float | None:
    """A cost in USD: None (unpriced) or a finite number from 0 to :data:`MAX_COST_USD`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GateError(f"{name} must be a number of USD, got {_short(value)}")
    if not math.isfinite(value) or not 0 <= value <= MAX_COST_USD:
        raise GateError(f"{name} must be from 0 to {MAX_COST_USD:,.0f} USD, got {_short(value)}")
    return float(value)


def seconds(value: Any, name: str = "latency_s") -> float | None:
    """A duration: None or a finite number of seconds >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise GateError(f"{name} must be a number of seconds, got {_short(value)}")
    if value < 0:
        raise GateError(f"{name} must be at least 0, got {_short(value)}")
    return float(value)


def verdict(value: Any, name: str) -> int | None:
    """A stored verdict field: 0, 1 or missing (None). ``7``, ``-3`` and ``True`` are refused."""
    if value is None:
        return None
    if not isinstance(value, bool) and isinstance(value, int | float) and value in VERDICT_VALUES:
        return int(value)
    raise GateError(f"{name} must be 0, 1 or empty, got {_short(value)}")


def verdicts(values: Mapping[str, Any] | None, fields: Collection[str]) -> None:
    """Every field of a verdict (what a judge said, or its scores after the rubric's rules) in
    range: 1, 0, or missing (None or -1). ``7`` and ``-3`` are refused, as are fields outside
    the rubric."""
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise GateError(f"verdict must be an object of fields, got {_short(values)}")
    allowed = SAID_VALUES
    for key, value in values.items():
        if (value is None or (type(value) is int and -1 <= value <= 1)) and key in fields:
            continue  # the common case (imports check tens of thousands of verdicts)
        if key not in fields:
            raise GateError(f"unknown verdict field {key!r} (the fields: {', '.join(fields)})")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
            raise GateError(f"{key} must be 1, 0 or missing (-1, empty), got {_short(value)}")


def text(value: Any, name: str, *, limit: int = MAX_TEXT_CHARS, optional: bool = True) -> Any:
    """A text field: a string of at most ``limit`` characters (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise GateError(f"{name} must be text, got {_short(value)}")
    if len(value) > limit:
        raise GateError(f"{name} is {len(value):,} characters, over the limit of {limit:,}")
    return value


def identifier(value: Any, name: str) -> str:
    """An id (model, claim, template, condition, judge): non-empty printable text without
    invisible characters, so two ids that look the same are the same."""
    if not isinstance(value, str) or not value.strip():
        raise GateError(f"{name} must be a non-empty id, got {_short(value)}")
    if len(value) > MAX_ID_CHARS:
        raise GateError(f"{name} is {len(value):,} characters, over the limit of {MAX_ID_CHARS}")
    if value.isascii() and value.isprintable():
        return value  # the common case, at C speed: no control or invisible character
    for ch in value:
        if unicodedata.category(ch) in _INVISIBLE:
            raise GateError(
                f"{name} {value!r} holds the invisible character U+{ord(ch):04X} "
                f"({unicodedata.name(ch, 'unnamed')})"
            )
    return value


def known(value: Any, allowed: Iterable[Any], name: str, where: str = "") -> Any:
    """``value`` when it is one of ``allowed`` (claim ids of the pack, models of a run, ...)."""
    if value not in allowed:
        raise GateError(f"unknown {name} {value!r}" + (f" (not in {where})" if where else ""))
    return value


def prompt(got: Any, expected: str, where: str) -> str:
    """The prompt a record says it sent must be the pack's rendering of its cell: a record of
    other prompts analysed as the benchmark's would be a wrong number."""
    if got != expected:
        shown = _short(got)
        raise GateError(f"its prompt {shown} is not {where}'s rendering of its claim and template")
    return expected


# -- the one table ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """What one plain field of a record may hold: an ``"id"`` (:func:`identifier`), a
    ``"whole"`` number from ``low`` to ``high`` (:func:`whole_number`), or ``"text"`` of at most
    ``high`` characters (:func:`text`; None too when ``optional``)."""

    kind: str
    high: int
    low: int = 0
    optional: bool = True

    def check(self, value: Any, name: str) -> Any:
        """``value`` when it meets the rule (a number read as :func:`whole_number` reads one),
        else :class:`GateError` naming ``name``."""
        if self.kind == "id":
            return identifier(value, name)
        if self.kind == "whole":
            return whole_number(value, name, self.low, self.high)
        return text(value, name, limit=self.high, optional=self.optional)

    def holds(self, values: Collection[Any]) -> bool:
        """Whether every one of ``values`` meets the rule exactly as it is: an int for a whole
        number (never a bool, a float or digits in a string), a str for text and ids. A column
        checked at once (an import's chunk); False only says "check them one by one"."""
        kinds = set(map(type, values))
        if self.kind == "whole":
            return kinds <= {int} and (
                not values or (self.low <= min(values) and max(values) <= self.high)
            )
        if self.optional and type(None) in kinds:
            kinds.discard(type(None))
            values = [v for v in values if v is not None]
        if not kinds <= {str}:
            return False
        if self.kind == "text":
            return max(map(len, values), default=0) <= self.high
        return all(map(_is_identifier, set(values)))


def _is_identifier(value: str) -> bool:
    try:
        identifier(value, "id")
    except GateError:
        return False
    return True


ID = Rule("id", MAX_ID_CHARS, optional=False)
TEXT = Rule("text", MAX_TEXT_CHARS)
TOKENS = Rule("whole", MAX_TOKENS)

#: Every plain field a record brings in, by its store name, with its rule: the one table the
#: checks below and the import's fast lane (:mod:`deflectbench.interop.bulk`) read.
RULES: dict[str, Rule] = {
    **dict.fromkeys(("benchmark", "model", "claim_id", "prompt_id", "condition", "judge"), ID),
    "sample": Rule("whole", MAX_SAMPLE),
    "prompt": Rule("text", MAX_TEXT_CHARS, optional=False),
    **dict.fromkeys(("response", "error", "raw", "reasoning"), TEXT),
    "input_tokens": TOKENS,
    "output_tokens": TOKENS,
    "finish_reason": Rule("text", MAX_ID_CHARS),
}


# -- whole records ------------------------------------------------------------------------------


#: A generation's fields checked first, in this order (each by its rule in :data:`RULES`).
_GENERATION_FIELDS = (
    *("benchmark", "model", "claim_id", "prompt_id", "condition"),
    *("sample", "prompt", "response", "error"),
)


def generation(rec: Any) -> Any:
    """A :class:`~deflectbench.records.GenerationRecord` fit to store, returned unchanged: ids printable, sample, usage and cost in
    range, texts within bounds, exactly one of response and error."""
    for name in _GENERATION_FIELDS:
        RULES[name].check(getattr(rec, name), name)
    if (rec.response is None) == (rec.error is None):
        raise GateError("a generation has exactly one of response and error")
    tokens(rec.input_tokens, "input_tokens")
    tokens(rec.output_tokens, "output_tokens")
    cost(rec.cost_usd)
    seconds(rec.latency_s)
    RULES["finish_reason"].check(rec.finish_reason, "finish_reason")
    served = (rec.extra or {}).get("served_model") if isinstance(rec.extra, dict) else None
    if served is not None:
        identifier(served, "served model")
    return rec


def judgment(rec: Any, fields: Collection[str]) -> Any:
    """A :class:`~deflectbench.records.JudgmentRecord` fit to store, returned unchanged: its judge an id, its verdict fields 0, 1 or
    missing, usage and cost in range, texts within bounds."""
    RULES["judge"].check(rec.judge, "judge")
    verdicts(rec.scores, fields)
    verdicts(rec.said, fields)
    for name in ("raw", "reasoning", "error"):
        RULES[name].check(getattr(rec, name), name)
    tokens(rec.input_tokens, "input_tokens")
    tokens(rec.output_tokens, "output_tokens")
    cost(rec.cost_usd)
    seconds(rec.latency_s)
    return rec


def label(rec: Any, fields: Collection[str]) -> Any:
    """A :class:`~deflectbench.records.HumanLabel` fit to store: fields 0, 1 or missing, a note
    within bounds."""
    for key, value in rec.values.items():
        if key not in fields:
            raise GateError(f"unknown field {key!r}")
        verdict(value, key)
    text(rec.note, "note", limit=MAX_NOTE_CHARS, optional=False)
    return rec


def served_id(value: Any) -> str | None:
    """The model id a reply names, when it names one a store keeps (printable, bounded), else
    None: a missing or unfit id is no reason to refuse the reply."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return identifier(value, "served model")
    except GateError:
        return None


def served_model(requested: str, served: Any) -> str | None:
    """A warning when a reply says another model served it (a proxy or replica serving another
    checkpoint), else None. The served id is kept beside the reply either way."""
    if served is None or not isinstance(served, str) or not served:
        return None
    if served == requested or _same_model(requested, served):
        return None
    return f"requested {requested} but the reply says it was served by {served!r}"


def served_mismatch(requested: str, served: Mapping[str, int]) -> dict[str, int]:
    """Of ``served`` (served id -> replies, as :meth:`Store.served_models` gives), the ids that
    are not ``requested`` (dated snapshots and provider prefixes aside), most replies first."""
    other = {s: int(n) for s, n in served.items() if served_model(requested, s)}
    return dict(sorted(other.items(), key=lambda kv: (-kv[1], kv[0])))


def served_line(model: str, served: Mapping[str, int], replies: int) -> str | None:
    """One line saying how many of ``model``'s ``replies`` another model served, and which ids
    (quoted as they are: the caller escapes for its medium), or None when every one is
    ``model``'s."""
    other = served_mismatch(model, served)
    if not other:
        return None
    n = sum(other.values())
    ids = ", ".join(f"{s!r} ({k:,})" for s, k in other.items())
    return f"{model}: {n:,} of {replies:,} replies say another model served them: {ids}"


def _same_model(requested: str, served: str) -> bool:
    """Providers name a dated snapshot of the model asked for (``gpt-4o`` ->
    ``gpt-4o-2024-08-06``) or drop the ``provider/`` prefix: the same model."""
    base = requested.split("/", 1)[-1]
    return served == base or served.startswith(base + "-") or served.endswith("/" + base)


#: A manifest's bounds (values a provider or server reports: hostile input, described, not
#: refused): text per value, entries per mapping or list, nesting, and values in all.
MANIFEST_TEXT_CHARS = 512
MANIFEST_ENTRIES = 64
MANIFEST_DEPTH = 5
MANIFEST_VALUES = 4_000


def manifest(value: Any) -> Any:
    """A run manifest's value as far as it is fit to store: the one rule that bounds instead of
    refusing, since a manifest describes what a provider said and refusing it would lose all of
    it. Text with an invisible or control character, a non-finite number and any other type
    become None; longer text is cut at :data:`MANIFEST_TEXT_CHARS` (marked ``...``); mappings
    and lists keep their first :data:`MANIFEST_ENTRIES` entries (keys: fit text) down to
    :data:`MANIFEST_DEPTH` levels, :data:`MANIFEST_VALUES` values in all. Nothing is rewritten
    otherwise: a fit value passes as it is."""
    left = [MANIFEST_VALUES]

    def fit_text(text: str) -> str | None:
        if len(text) > MANIFEST_TEXT_CHARS:
            text = text[: MANIFEST_TEXT_CHARS - 3] + "..."
        if text.isascii() and text.isprintable():
            return text
        if any(unicodedata.category(ch) in _INVISIBLE for ch in text):
            return None
        return text

    def walk(v: Any, depth: int) -> Any:
        left[0] -= 1
        if left[0] < 0:
            return None
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, int):
            return v if abs(v) <= 2**53 else None
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, str):
            return fit_text(v)
        if depth >= MANIFEST_DEPTH:
            return None
        if isinstance(v, Mapping):
            out: dict[str, Any] = {}
            for k, item in itertools.islice(v.items(), MANIFEST_ENTRIES):
                key = fit_text(k) if isinstance(k, str) and len(k) <= MAX_ID_CHARS else None
                if key is not None and left[0] > 0:
                    out[key] = walk(item, depth + 1)
            return out
        if isinstance(v, list | tuple):
            return [
                walk(x, depth + 1) for x in itertools.islice(v, MANIFEST_ENTRIES) if left[0] > 0
            ]
        return None

    return walk(value, 0)


# -- duplicates ---------------------------------------------------------------------------------

#: What :meth:`Duplicates.check` says of a record.
NEW, REPEAT = "new", "repeat"


@dataclass
class _Seen:
    where: str
    content: Any


class Duplicates:
    """Duplicates within one source and against the store. A record repeating another's key
    with the same content is counted once (:data:`REPEAT`); with other content it is refused
    (a :class:`GateError` naming where the first one is), never merged into the first one.

    ``stored`` maps a key to ``(content, good, store id)``: a stored good record is never
    replaced (a conflicting one is refused); a stored failed request is (the new one is
    :data:`NEW`).
    """

    def __init__(self, stored: Mapping[Hashable, tuple[Any, bool, Any]] | None = None) -> None:
        self.stored = stored if stored is not None else {}
        self.seen: dict[Hashable, _Seen] = {}

    def check(self, key: Hashable, content: Any, where: str, label: str = "") -> str:
        """:data:`NEW` or :data:`REPEAT` for the record at ``where`` (``line 4``); raises
        :class:`GateError` for a conflicting one. ``label`` names it (``gen_id 'c1__p1'``)."""
        name = label or "this record"
        first = self.seen.get(key)
        if first is not None:
            if first.content == content:
                return REPEAT
            raise GateError(
                f"conflicting duplicate: {name} is also at {first.where} with other content; "
                f"kept {first.where}, skipped this one"
            )
        old = self.stored.get(key)
        if old is not None and old[1]:
            if old[0] != content:
                store_id = "" if old[2] is None else f" (store id {old[2]})"
                raise GateError(
                    f"conflicting duplicate: {name} is already stored{store_id} with other "
                    "content; kept the stored one, skipped this one"
                )
            self.seen[key] = _Seen(where, content)
            return REPEAT
        self.seen[key] = _Seen(where, content)
        return NEW

    def forget(self, key: Hashable) -> None:
        """The record at ``key`` was not stored after all (the store refused it)."""
        self.seen.pop(key, None)


# -- counts -------------------------------------------------------------------------------------


def balance(
    new: int, present: int, skipped: int, seen: int, declared: int | None, what: str
) -> str | None:
    """None when new + already present + skipped = seen (= declared, when the source declares
    a count); else one line saying what does not add up (records missing from the source, or
    records unaccounted for)."""
    total = new + present + skipped
    if total != seen:
        return (
            f"{what}: {new} new + {present} already present + {skipped} skipped = {total}, "
            f"but {seen} were read: {seen - total} unaccounted for"
        )
    if declared is not None and declared != seen:
        missing = declared - seen
        if missing > 0:
            return f"{what}: declares {declared} but holds {seen}: {missing} missing"
        return f"{what}: declares {declared} but holds {seen}: {-missing} more than declared"
    return None
