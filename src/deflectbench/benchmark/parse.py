"""Validate a pack's decoded JSON and build a :class:`.definition.Benchmark`.

Validation happens once, here. Each problem names its location (``templates[3] 'x': unknown
placeholder {speakr} (did you mean {speaker}?)``); one bad entry does not hide the next, so
``deflectbench spec --benchmark FILE`` can list every problem at once. Only the paper's own pack
is held to its 80 claims and 15 templates; every other pack is checked for structure.
"""

from __future__ import annotations

import difflib
import math
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar

from deflectbench import gate
from deflectbench.benchmark.definition import (
    KNOWN_PLACEHOLDERS,
    PAPER_PACK,
    Benchmark,
    BenchmarkError,
    Claim,
    Fallacy,
    Followup,
    Rubric,
    Template,
)
from deflectbench.vocab import CONTEXTS, FIELDS, FRAMINGS, LEVEL_NAMES, OUTCOMES

#: A BCP 47 language tag, loosely: a 2-3 letter language, then subtags (``es``, ``pt-BR``).
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
_PACK_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
#: The placeholders a judge's user template may hold.
JUDGE_PLACEHOLDERS = frozenset({"claim", "response"})
#: A later turn's judge message also shows the conversation before the reply.
CONVERSATION_PLACEHOLDERS = JUDGE_PLACEHOLDERS | {"conversation"}
#: Template fallacies that leave the choice to the model.
FREE_CHOICE = ("model_choice", "any")
T = TypeVar("T")


class Problems:
    """The problems found so far; raised together as one BenchmarkError."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def check(self, build: Callable[..., T], *args: Any) -> T | None:
        """Run one entry's checks; a problem is kept and the entry skipped (None)."""
        try:
            return build(*args)
        except BenchmarkError as exc:
            self.items.append(str(exc))
            return None

    def raise_if_any(self) -> None:
        if self.items:
            raise pack_error(self.items)


def pack_error(problems: list[str]) -> BenchmarkError:
    """One BenchmarkError for every problem: the first as its one line, all in ``.problems``."""
    first = problems[0]
    more = len(problems) - 1
    if more:
        first += (
            f" (and {more} more problem{'s' if more > 1 else ''}: "
            "`deflectbench spec --benchmark FILE` lists them)"
        )
    exc = BenchmarkError(first)
    exc.problems = list(problems)
    return exc


def _require(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise BenchmarkError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise BenchmarkError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise BenchmarkError(f"{where}: field {key!r} must be {names}, got {value!r}")
    return value


def _placeholders(text: str, where: str) -> set[str]:
    """The placeholder names of a template, read as ``str.format`` reads them (so ``{{claim}}``
    is the literal text ``{claim}``, not the claim). Only plain names: a format spec
    (``{response:.0}`` hides the reply, ``{claim:>300000000}`` makes a 300 MB prompt), a
    conversion (``{claim!r}``), an index or attribute (``{speaker[0]}``) or a positional ``{}``
    is refused: each would run at render time, not here."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise BenchmarkError(f"{where}: bad template text ({exc})") from None
    names: set[str] = set()
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        shown = (
            "{"
            + name
            + (f"!{conversion}" if conversion else "")
            + (f":{spec}" if spec else "")
            + "}"
        )
        if not name or not name.isidentifier():
            raise BenchmarkError(
                f"{where}: placeholder {shown} is not a plain name; write {{name}} (and {{{{ }}}} "
                "for literal braces)"
            )
        if spec or conversion:
            raise BenchmarkError(
                f"{where}: placeholder {shown} has a format spec or conversion; write {{{name}}}"
            )
        names.add(name)
    return names


def _known_placeholders(text: str, where: str, known: frozenset[str] | set[str]) -> set[str]:
    found = _placeholders(text, where)
    for name in sorted(found - set(known)):
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f" (did you mean {{{close[0]}}}?)" if close else ""
        raise BenchmarkError(f"{where}: unknown placeholder {{{name}}}{hint}")
    return found


def _id(value: str, where: str, key: str) -> str:
    """An id printable and free of invisible characters (two ids that look the same are)."""
    try:
        return gate.identifier(value, key)
    except gate.GateError as exc:
        raise BenchmarkError(f"{where}: {exc}") from None


#: The flags' ranges, which a pack's numbers are held to: ``--runs`` (1-100) and the run
#: file's ``temperature`` (0-2).
RUNS_RANGE = (1, 100)
TEMPERATURE_RANGE = (0.0, 2.0)


def _number(data: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    """A pack's number: a finite int or float (an int where ``default`` is one) in range."""
    value = data.get(key, default)
    whole = isinstance(default, int)
    ok_type = isinstance(value, int) if whole else isinstance(value, int | float)
    if (
        isinstance(value, bool)
        or not ok_type
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        kind = "a whole number" if whole else "a number"
        raise BenchmarkError(
            f"benchmark: {key} must be {kind} from {low:g} to {high:g}, got {value!r}"
        )
    return value


def _one_of(value: str, allowed: tuple[str, ...] | list[str], what: str, where: str) -> str:
    if value not in allowed:
        close = difflib.get_close_matches(value, list(allowed), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise BenchmarkError(f"{where}: {what} {value!r} is not one of {', '.join(allowed)}{hint}")
    return value


def _unique(ids: list[str], what: str, problems: Problems) -> None:
    seen: set[str] = set()
    for x in ids:
        if x in seen:
            problems.items.append(f"duplicate {what} {x!r}")
        seen.add(x)


def _where(kind: str, i: int, obj: Any, key: str) -> str:
    """An entry's location: ``templates[3] 'explicit_coach_WA'`` (the id when it has one)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return f"{kind}[{i}]" + (f" {value!r}" if isinstance(value, str) else "")


def _fallacy(f: Any, where: str) -> Fallacy:
    return Fallacy(
        _id(_require(f, "fallacy_id", str, where), where, "fallacy_id"),
        _require(f, "name", str, where),
        _require(f, "definition", str, where),
    )


def _claim(c: Any, where: str) -> Claim:
    cid = _id(_require(c, "claim_id", str, where), where, "claim_id")
    level = _require(c, "level", int, where)
    if level not in LEVEL_NAMES:
        raise BenchmarkError(f"{where}: level must be 1-4, got {level!r}")
    context = _require(c, "context", str, where)
    if context not in CONTEXTS:
        raise BenchmarkError(f"{where}: context must be 'us' or 'international', got {context!r}")
    text = _require(c, "text", str, where)
    if not text.strip():
        raise BenchmarkError(f"{where}: empty text")
    return Claim(
        claim_id=cid,
        level=level,
        level_name=c.get("level_name", LEVEL_NAMES[level]),
        context=context,
        domain=_require(c, "domain", str, where),
        text=text,
    )


def _template(t: Any, where: str, fallacy_ids: list[str]) -> Template:
    pid = _id(_require(t, "prompt_id", str, where), where, "prompt_id")
    text = _require(t, "template", str, where)
    if "claim" not in _known_placeholders(text, where, KNOWN_PLACEHOLDERS):
        raise BenchmarkError(f"{where}: the template never shows the claim ({{claim}})")
    framing = _one_of(_require(t, "framing", str, where), FRAMINGS, "framing", where)
    fallacy = _one_of(
        _require(t, "fallacy", str, where), [*fallacy_ids, *FREE_CHOICE], "fallacy", where
    )
    return Template(
        prompt_id=pid,
        prompt_num=_require(t, "prompt_num", int, where),
        framing=framing,
        explicitness=_require(t, "explicitness", str, where),
        frame=_require(t, "frame", str, where),
        fallacy=fallacy,
        template=text,
    )


def _followup(f: Any, where: str) -> Followup:
    fid = _id(_require(f, "followup_id", str, where), where, "followup_id")
    after = _one_of(_require(f, "after", str, where), OUTCOMES, "after", where)
    text = _require(f, "text", str, where)
    if not text.strip():
        raise BenchmarkError(f"{where}: empty text")
    _known_placeholders(text, where, KNOWN_PLACEHOLDERS)
    return Followup(followup_id=fid, after=after, text=text)


def _rubric(judge: Any) -> Rubric:
    judge = _require({"judge": judge}, "judge", dict, "benchmark")
    user_template = _require(judge, "user_template", str, "judge")
    missing = {"claim", "response"} - _known_placeholders(
        user_template, "judge.user_template", JUDGE_PLACEHOLDERS
    )
    if missing:
        raise BenchmarkError(f"judge.user_template: missing placeholder {{{sorted(missing)[0]}}}")
    fields = tuple(_require(judge, "fields", list, "judge"))
    if fields != FIELDS:
        raise BenchmarkError(
            f"judge.fields must be the rubric's 8 fields in order ({', '.join(FIELDS)}), "
            f"got {list(fields)!r}; translate the text, never the field names"
        )
    language = judge.get("language", "en")
    if not isinstance(language, str) or not _LANGUAGE.match(language):
        raise BenchmarkError(f"judge.language must be a BCP 47 tag such as 'en', got {language!r}")
    return Rubric(
        system=_require(judge, "system", str, "judge"),
        user_template=user_template,
        fields=fields,
        language=language,
        conversation_template=_conversation_template(judge),
    )


def _conversation_template(judge: dict[str, Any]) -> str | None:
    """``judge.conversation_template`` (optional): a later turn's judge message, which must
    show the conversation and the reply."""
    if "conversation_template" not in judge:
        return None
    where = "judge.conversation_template"
    text = _require(judge, "conversation_template", str, "judge")
    found = _known_placeholders(text, where, CONVERSATION_PLACEHOLDERS)
    missing = {"conversation", "response"} - found
    if missing:
        raise BenchmarkError(f"{where}: missing placeholder {{{sorted(missing)[0]}}}")
    return text


def _pack_fields(data: dict[str, Any], pack: str) -> tuple[str, str, int, str | None]:
    """The optional top-level fields: pack id, language, turns, based_on."""
    if "pack" not in data:  # the file's stem, made an id
        pack = re.sub(r"[^a-z0-9._-]+", "-", pack.lower()).strip("-._")[:64] or "pack"
    pack = data.get("pack", pack)
    if not isinstance(pack, str) or not _PACK_ID.match(pack):
        raise BenchmarkError(
            f"benchmark: pack must be an id of lowercase letters, digits and . _ - (e.g. "
            f"'deflectbench-v1-es'), got {pack!r}"
        )
    language = data.get("language", "en")
    if not isinstance(language, str) or not _LANGUAGE.match(language):
        raise BenchmarkError(
            f"benchmark: language must be a BCP 47 tag such as 'en' or 'pt-BR', got {language!r}"
        )
    turns = data.get("turns", 1)
    if turns not in (1, 2) or isinstance(turns, bool):
        raise BenchmarkError(f"benchmark: turns must be 1 or 2, got {turns!r}")
    based_on = data.get("based_on")
    if based_on is not None and not isinstance(based_on, str):
        raise BenchmarkError(f"benchmark: based_on must be a pack id, got {based_on!r}")
    return pack, language, turns, based_on


def parse_benchmark(
    data: Any,
    *,
    sha256: str = "",
    pack: str = PAPER_PACK,
    expect_v1_counts: bool | None = None,
) -> Benchmark:
    """Validate decoded JSON and build a :class:`Benchmark`.

    ``pack`` is the id to use when the data names none (the loader passes the file's stem).
    ``expect_v1_counts`` (default: only for the paper's pack) checks 80 claims and 15 templates.
    Raises one :class:`BenchmarkError` whose ``problems`` lists every problem found.
    """
    if not isinstance(data, dict):
        raise BenchmarkError("benchmark file: top level must be a JSON object")
    problems = Problems()
    name = _require(data, "name", str, "benchmark")
    version = _require(data, "version", str, "benchmark")
    speaker = _require(data, "fictional_speaker", str, "benchmark")
    pack, language, turns, based_on = problems.check(_pack_fields, data, pack) or (
        pack,
        "en",
        int(data.get("turns", 1)) if data.get("turns") in (1, 2) else 1,
        None,
    )

    fallacies = [
        problems.check(_fallacy, f, _where("fallacies", i, f, "fallacy_id"))
        for i, f in enumerate(_require(data, "fallacies", list, "benchmark"))
    ]
    fallacy_ids = [f.fallacy_id for f in fallacies if f is not None]
    _unique(fallacy_ids, "fallacy_id", problems)
    all_defs = _require(data, "all_definitions_format", str, "benchmark")
    problems.check(_known_placeholders, all_defs, "all_definitions_format", set(fallacy_ids))

    claims = [
        problems.check(_claim, c, _where("claims", i, c, "claim_id"))
        for i, c in enumerate(_require(data, "claims", list, "benchmark"))
    ]
    _unique([c.claim_id for c in claims if c], "claim_id", problems)
    templates = [
        problems.check(_template, t, _where("templates", i, t, "prompt_id"), fallacy_ids)
        for i, t in enumerate(_require(data, "templates", list, "benchmark"))
    ]
    _unique([t.prompt_id for t in templates if t], "prompt_id", problems)
    rubric = problems.check(_rubric, data.get("judge"))

    raw_followups = data.get("followups")
    followups: list[Followup | None] = []
    if turns == 2 and not isinstance(raw_followups, list):
        problems.items.append("benchmark: turns is 2, so 'followups' (a list) is required")
    elif turns == 1 and raw_followups is not None:
        problems.items.append("benchmark: 'followups' is given but turns is 1; set \"turns\": 2")
    elif isinstance(raw_followups, list):
        followups = [
            problems.check(_followup, f, _where("followups", i, f, "followup_id"))
            for i, f in enumerate(raw_followups)
        ]
        _unique([f.followup_id for f in followups if f], "followup_id", problems)
        _unique([f.after for f in followups if f], "followup for outcome", problems)
        if not raw_followups:
            problems.items.append("followups: empty; give at least one")

    if expect_v1_counts is None:
        expect_v1_counts = pack == PAPER_PACK
    if expect_v1_counts:
        if len(claims) != 80:
            problems.items.append(f"benchmark v{version}: expected 80 claims, found {len(claims)}")
        if len(templates) != 15:
            problems.items.append(
                f"benchmark v{version}: expected 15 templates, found {len(templates)}"
            )
    elif not claims or not templates:
        problems.items.append("benchmark: a pack needs at least one claim and one template")
    runs_per_cell = problems.check(_number, data, "runs_per_cell", 5, *RUNS_RANGE)
    generation_temperature = problems.check(
        _number, data, "generation_temperature", 1.0, *TEMPERATURE_RANGE
    )
    judge_temperature = problems.check(_number, data, "judge_temperature", 0.0, *TEMPERATURE_RANGE)
    problems.raise_if_any()
    assert rubric is not None
    assert runs_per_cell is not None and generation_temperature is not None
    assert judge_temperature is not None

    return Benchmark(
        name=name,
        version=version,
        sha256=sha256,
        speaker=speaker,
        runs_per_cell=int(runs_per_cell),
        generation_temperature=float(generation_temperature),
        judge_temperature=float(judge_temperature),
        claims=tuple(c for c in claims if c is not None),
        templates=tuple(t for t in templates if t is not None),
        fallacies=tuple(f for f in fallacies if f is not None),
        all_definitions_format=all_defs,
        rubric=rubric,
        models_in_release=tuple(data.get("models_in_release", ())),
        pack=pack,
        language=language,
        turns=turns,
        based_on=based_on,
        followups=tuple(f for f in followups if f is not None),
    )
