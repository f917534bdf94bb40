"""A faithful round trip without a column per release field: what export cannot derive.

Every field that can be derived (from the benchmark, or from the store's columns) is derived on
export; at import the record is compared with what export would derive, and only the differences
(plus a few ids the spec asks to keep verbatim) go to the row's ``extra`` dict. Meta keys there
start with ``_``: ``_keys`` (the record's own key order, when not the spec's), ``_json`` (values
holding objects, kept as JSON text because the store sorts object keys) and ``_style`` (the
line's JSON style when it is not ``json.dumps(record, ensure_ascii=False)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

#: Kept in ``extra`` even when derivable: the spec asks for these ids and flags verbatim.
GEN_ALWAYS = frozenset({"gen_id", "timestamp"})
EVAL_ALWAYS = frozenset(
    {"eval_id", "gen_id", "detected_fallacies", "consistency_flag", "timestamp"}
)

_MISSING: Any = object()


def has_object(v: Any) -> bool:
    """Whether a JSON value holds an object anywhere (the store would sort its keys)."""
    t = type(v)
    if t is dict:
        return True
    if t is list:
        for x in v:
            if type(x) in (dict, list) and has_object(x):
                return True
    return False


def line_style(line: str, obj: Mapping[str, Any]) -> str | None:
    """How the line was written, when not ``json.dumps(obj, ensure_ascii=False)``."""
    style = []
    if line.isascii() and "\\u" in line and not json.dumps(obj, ensure_ascii=False).isascii():
        style.append("ascii")
    end = line.find('":', 1)
    if end != -1 and line[end + 2 : end + 3] != " ":
        style.append("compact")
    return "+".join(style) or None


def plain(lines: Sequence[str], first_key: str) -> bool:
    """Whether :func:`line_style` is None for every one of ``lines`` (each a record whose first
    key is ``first_key``, a name without quotes): each opens as ``json.dumps`` opens it (not
    compact), and no ASCII line holds a ``\\u`` escape (only such a line can be ASCII-escaped;
    one whose escapes are all of ASCII characters is asked line by line). A test of a chunk at
    once, on the lines alone: False says "ask line by line"."""
    opening = f'{{"{first_key}": '
    # the ASCII lines searched as one text ("\\u" cannot span the newlines between them)
    return all(map(str.startswith, lines, repeat(opening))) and (
        "\\u" not in "\n".join(filter(str.isascii, lines))
    )


def remember(
    obj: Mapping[str, Any], line: str, derived: Mapping[str, Any], always: frozenset[str]
) -> dict[str, Any]:
    """The ``extra`` of a record read from ``line``: what export cannot derive (differing or
    unknown fields, the key order if not the spec's, the line style), plus the ``always`` ids."""
    style = line_style(line, obj)
    extra: dict[str, Any] = {}
    as_json: dict[str, str] = {}
    if list(obj.items()) == list(derived.items()) and list(map(type, obj.values())) == list(
        map(type, derived.values())
    ):
        # the common case, compared at C speed: only the ids the spec keeps verbatim
        for k in always:
            v = obj[k]
            if has_object(v):
                as_json[k] = json.dumps(v, ensure_ascii=False)
            else:
                extra[k] = v
        if as_json:
            extra["_json"] = as_json
        if style:
            extra["_style"] = style
        return extra
    for k, v in obj.items():
        dv = derived.get(k, _MISSING)
        if k in always or dv is _MISSING or dv != v or type(dv) is not type(v):
            if k[:1] == "_" or has_object(v):
                as_json[k] = json.dumps(v, ensure_ascii=False)
            else:
                extra[k] = v
    if as_json:
        extra["_json"] = as_json
    if tuple(obj) != tuple(derived):
        extra["_keys"] = list(obj)
    if style:
        extra["_style"] = style
    return extra


def restore(derived: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Apply an ``extra`` written by :func:`remember` to a derived record. Keys in ``extra``
    that are neither release fields nor listed in ``_keys`` are someone else's: ignored."""
    if not extra:
        return derived
    keys = extra.get("_keys")
    allowed = set(derived) | set(keys or ())
    values = dict(derived)
    for k, v in extra.items():
        if k in allowed:
            values[k] = v
    for k, s in (extra.get("_json") or {}).items():
        values[k] = json.loads(s)
    if keys is None:
        return values
    return {k: values[k] for k in keys if k in values}


def dumps(record: Mapping[str, Any], extra: Mapping[str, Any] | None) -> str:
    """A record as its release line (no newline), in the JSON style ``extra`` remembers."""
    style = (extra or {}).get("_style")
    if style is None:
        return json.dumps(record, ensure_ascii=False)
    return json.dumps(
        record,
        ensure_ascii="ascii" in style,
        separators=(",", ":") if "compact" in style else None,
    )
