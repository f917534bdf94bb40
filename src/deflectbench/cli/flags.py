"""A command's flags as one frozen dataclass, so its body takes one value and not twenty.

Typer reads a command's options from its signature. :func:`flag_command` gives the command
the signature of a dataclass's fields (each an ``Annotated[type, typer.Option(...)]`` with its
default, in order), and calls the body with one instance of it: the help, the order of the
options and their parsing are what the same parameters written out would give.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, TypeVar, get_type_hints

F = TypeVar("F")


def flag_command(flags: type[F]) -> Callable[[Callable[[F], None]], Callable[..., None]]:
    """Decorate ``body(flags: F)`` into a command whose options are the fields of ``flags``."""
    hints = get_type_hints(flags, include_extras=True)
    params = []
    for f in fields(flags):  # type: ignore[arg-type]
        if f.default is MISSING:
            raise TypeError(f"{flags.__name__}.{f.name}: a flag needs a default")
        params.append(
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
            )
        )

    def decorate(body: Callable[[F], None]) -> Callable[..., None]:
        def command(**values: Any) -> None:
            body(flags(**values))

        command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
        command.__name__ = command.__qualname__ = body.__name__
        command.__module__, command.__doc__ = body.__module__, body.__doc__
        return command

    return decorate
