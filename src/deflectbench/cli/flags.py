"""A command's flags as one frozen dataclass, so its body takes one value and not twenty.

Typer reads a command's options from its signature. :func:`flag_command` gives the command
the signature of a dataclass's fields (each an ``Annotated[type, typer.Option(...)]`` with its
default, in order), and calls the body with one instance of it: the help, the order of the
options and their parsing are what the same parameters written out would give.

A field whose type is itself such a dataclass is a group of flags several commands share (the
analysis settings of ``analyze`` and ``report``): its fields stand in its place, in order, and
the body receives the group built from them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar, get_type_hints

F = TypeVar("F")


def _params(flags: type) -> list[inspect.Parameter]:
    """The options of ``flags``, its groups' fields in their place."""
    hints = get_type_hints(flags, include_extras=True)
    params = []
    for f in fields(flags):
        hint = hints[f.name]
        if isinstance(hint, type) and is_dataclass(hint):
            params.extend(_params(hint))
            continue
        if f.default is MISSING:
            raise TypeError(f"{flags.__name__}.{f.name}: a flag needs a default")
        params.append(
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hint
            )
        )
    return params


def _build(flags: type, values: dict[str, Any]) -> Any:
    """``flags`` from the parsed options, each group built from its own."""
    hints = get_type_hints(flags, include_extras=True)
    kwargs = {}
    for f in fields(flags):
        hint = hints[f.name]
        group = isinstance(hint, type) and is_dataclass(hint)
        kwargs[f.name] = _build(hint, values) if group else values[f.name]
    return flags(**kwargs)


def flag_command(flags: type[F]) -> Callable[[Callable[[F], None]], Callable[..., None]]:
    """Decorate ``body(flags: F)`` into a command whose options are the fields of ``flags``."""
    params = _params(flags)
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise TypeError(f"{flags.__name__}: an option named twice in its groups")

    def decorate(body: Callable[[F], None]) -> Callable[..., None]:
        def command(**values: Any) -> None:
            body(_build(flags, values))

        command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
        command.__name__ = command.__qualname__ = body.__name__
        command.__module__, command.__doc__ = body.__module__, body.__doc__
        return command

    return decorate
