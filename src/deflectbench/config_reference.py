"""The run file's reference, rendered from the models that validate it, so it cannot drift.

Every key of ``[run]`` (:class:`~deflectbench.config.RunConfig`, less its tables), ``[providers.NAME]``
(:class:`~deflectbench.models.providers.ProviderConfig`) and ``[prices."provider/model"]``
(:class:`~deflectbench.config.PriceEntry`) with its TOML type, default, allowed values and
meaning, taken from the fields' annotations, constraints and descriptions. Regenerate
``docs/configuration.md`` with ``python -m deflectbench.config_reference > docs/configuration.md``
(a test checks the file equals this module's output).
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

REGENERATE = "python -m deflectbench.config_reference > docs/configuration.md"

_EXAMPLE = """\
[run]
models = ["openai/gpt-5.5", "myvllm/meta-llama/Llama-3.1-8B-Instruct"]
judges = ["anthropic/claude-haiku-4-5-20251001", "openai/gpt-5.4-mini"]
preset = "full"
max_cost = 150.0

[providers.openai]
max_concurrency = 64
requests_per_minute = 500

[providers.myvllm]
base_url = "http://127.0.0.1:8000/v1"
max_concurrency = 128

[prices."openai/gpt-5.5"]
input_per_mtok = 1.25
output_per_mtok = 10.0
"""


def reference_markdown() -> str:
    """``docs/configuration.md``: every key of the run file, from the code."""
    from deflectbench.config import PriceEntry, RunConfig
    from deflectbench.config.run_config import run_keys
    from deflectbench.models.providers import PROVIDERS, ProviderConfig

    out = [
        "# Configuration reference",
        "",
        f"<!-- Generated from the code: `{REGENERATE}`. Do not edit by hand; a test checks "
        "that this file equals what the code generates. -->",
        "",
        "A run file is TOML, given with `deflectbench run --config FILE` (or `deflectbench judge "
        "--config FILE`). It has three kinds of sections, all optional. A key that is not "
        "listed here is an error that names the allowed keys. API keys never go in the file: "
        "a provider names the environment variable that holds its key (`api_key_env`).",
        "",
        "The same settings are one model, `deflectbench.RunConfig`: the keys of `[run]` are "
        "its fields and the keyword arguments of `deflectbench.run(...)` (flags, then Python "
        "keywords, win over the file), and `providers` and `prices` take the tables below as "
        "dictionaries.",
        "",
        "```toml",
        _EXAMPLE.rstrip("\n"),
        "```",
        "",
        "## `[run]`",
        "",
        _doc(RunConfig),
        "",
        *_table(RunConfig, run_keys()),
        "",
        "## `[providers.NAME]`",
        "",
        "How to reach one provider, and how hard to push it. A section named after a built-in "
        "provider changes only the keys it sets (the others keep that provider's defaults, "
        "below); a section with any other name and a `base_url` makes `NAME/<model>` an "
        "OpenAI-compatible server. `local/...` and `gguf/...` models run in-process and read "
        "no section.",
        "",
        *_table(ProviderConfig),
        "",
        "Built-in providers, and where their defaults differ from the table above:",
        "",
        "| provider | defaults |",
        "| --- | --- |",
        *(
            f"| `{name}` | {_cell(_differences(config, ProviderConfig()))} |"
            for name, config in PROVIDERS.items()
        ),
        "",
        '## `[prices."provider/model"]`',
        "",
        _doc(PriceEntry) + " A model's price is looked up by exact name (here, then in the "
        "bundled list `src/deflectbench/models/prices.json`), then by the longest matching "
        "wildcard (here, then bundled). A model without a price is shown as unknown in the dry "
        "run, never as free.",
        "",
        *_table(PriceEntry),
        "",
    ]
    return "\n".join(out)


def _doc(model: type[BaseModel]) -> str:
    """A model's docstring as one paragraph, without the section name it starts with (the
    heading says it) and with reST double backticks made Markdown."""
    text = " ".join(inspect.cleandoc(model.__doc__ or "").split()).replace("``", "`")
    head, sep, rest = text.partition(": ")
    if sep and head.startswith("`[") and head.endswith("]`"):
        text = rest[:1].upper() + rest[1:]
    return text


def _table(model: type[BaseModel], keys: list[str] | None = None) -> list[str]:
    """One row per key of ``model`` (those of ``keys`` only, when given)."""
    rows = ["| key | type | default | allowed | meaning |", "| --- | --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if keys is not None and name not in keys:
            continue
        cells = (
            f"`{name}`",
            _toml_type(field.annotation),
            _default(field),
            _allowed(field),
            field.description or "",
        )
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _toml_type(annotation: Any) -> str:
    """The TOML type a key takes (optional keys are simply left out, so ``None`` is not one)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(_toml_type(a) for a in args if a is not type(None))
    if origin is Literal:
        return "string"
    if origin is list:
        return f"array of {_toml_type(args[0])}s" if args else "array"
    if origin is dict:
        value = args[1] if len(args) == 2 else Any
        return "table" if value is Any else f"table of {_toml_type(value)}s"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"  # e.g. an endpoint: { base_url = "...", max_concurrency = 8 }
    return {str: "string", int: "integer", float: "float", bool: "boolean"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        inner = ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return _number(value)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return f"`{_toml_value(field.default_factory())}`"  # type: ignore[call-arg]
    if field.is_required():
        return "required"
    if field.default is None:
        return "not set"
    return f"`{_toml_value(field.default)}`"


def _allowed(field: FieldInfo) -> str:
    """Choices (a Literal type or the field's ``enum``) or bounds (constraints, ``minimum``,
    ``maximum``, ``exclusiveMinimum`` in its JSON-schema extra)."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    literals = [a for a in get_args(field.annotation) if get_origin(a) is Literal]
    if get_origin(field.annotation) is Literal:
        literals = [field.annotation]
    choices = [c for lit in literals for c in get_args(lit)] or list(extra.get("enum") or [])  # type: ignore[arg-type]
    if choices:
        return ", ".join(f"`{_toml_value(c)}`" for c in choices)
    low, high = _bounds(field, extra)
    if low and high and low[0] == "min" and high[0] == "max":
        return f"{_number(low[1])} to {_number(high[1])}"
    words = {"min": "at least", "above": "above", "max": "at most", "below": "below"}
    return ", ".join(f"{words[kind]} {_number(v)}" for kind, v in (low, high) if kind)


def _bounds(field: FieldInfo, extra: dict[str, Any]) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """The lower and upper bound of a number, each ``(kind, value)`` or ``("", None)``."""
    low: tuple[str, Any] = ("", None)
    high: tuple[str, Any] = ("", None)
    for m in field.metadata:  # pydantic's constraint objects (annotated_types Ge, Gt, Le, Lt)
        for attr, kind in (("ge", "min"), ("gt", "above"), ("le", "max"), ("lt", "below")):
            value = getattr(m, attr, None)
            if value is not None and kind in ("min", "above"):
                low = (kind, value)
            elif value is not None:
                high = (kind, value)
    if "minimum" in extra:
        low = ("min", extra["minimum"])
    if "exclusiveMinimum" in extra:
        low = ("above", extra["exclusiveMinimum"])
    if "maximum" in extra:
        high = ("max", extra["maximum"])
    return low, high


def _differences(config: BaseModel, defaults: BaseModel) -> str:
    changed = {
        k: v for k, v in config.model_dump().items() if v != getattr(defaults, k) and v is not None
    }
    return ", ".join(f"`{k} = {_toml_value(v)}`" for k, v in changed.items())


def main() -> None:
    sys.stdout.write(reference_markdown())


if __name__ == "__main__":
    main()
