"""The typer app: its commands in help order, ``--version``, and :func:`main`, which turns
every error the user can fix into one line and an exit code.

The commands are a table (:data:`COMMANDS`): a command's module is imported, and its click
command built, when it runs or a help lists it. ``--version`` imports none of them, ``run
--help`` only ``run``'s; each command imports the library it uses inside its function.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterator, MutableMapping
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from deflectbench.cli.console import UserError, console, err

#: What a value option's help shows for the value it takes, by the type typer reports.
_VALUE_LABELS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH"}


def _readable_label(label: str) -> str:
    """``<list[str]>`` -> ``TEXT``, ``<int range>`` -> ``INTEGER``: what to type, not Python."""
    inner = label.strip().removesuffix("...").strip("<>").lower()
    inner = inner.removeprefix("list[").removesuffix("]").split(" ")[0]
    return _VALUE_LABELS.get(inner, inner.upper())


def _plain_labels(params: list[Any], ctx: Any) -> list[Any]:
    """Help that reads as a command line: a switch (``--dry-run``) shows no label, since it takes
    no value (typer labels every flag ``<bool>``), and a value shows what to type (``TEXT``,
    ``INTEGER``) instead of a Python type (``<list[str]>``). An explicit metavar is kept."""
    for p in params:
        if getattr(p, "is_flag", False) and not getattr(p, "count", False):
            p.metavar = ""
            continue
        shown = getattr(p, "display_type_rich", None)
        if not callable(shown):  # an older typer: values already labelled by click type (TEXT)
            continue
        label = _readable_label(str(shown(ctx) or ""))
        if getattr(p, "param_type_name", "") == "argument":
            # an argument's metavar is its name; its type column is asked for separately
            p.metavar = p.metavar or (p.name or label).upper()
            p.display_type_rich = lambda ctx, label=label: label
        elif p.metavar is None:
            p.metavar = label
    return params


#: What :func:`_plain_value` returns when typer's own coercion must decide.
_UNDECIDED = object()
#: An integer as typed, which pydantic's lax mode reads as ``int`` does.
_DIGITS = re.compile(r"0|[1-9][0-9]{0,17}")


def _plain_value(param: Any, value: Any, ctx: Any) -> Any:
    """The value typer's coercion gives ``param``, computed without pydantic when it is certain:
    a missing value, a string, an integer within the option's bounds, a path typed in its
    normal form (typer's own path checks then run on it), or a list of those (typer's list:
    each value as one alone); else :data:`_UNDECIDED`."""
    desc = param.type_descriptor
    info = desc.parameter_info
    multi = param.multiple or param.nargs == -1
    if value is None:
        return () if multi else None
    if info.parser is not None or desc.file_annotation is not None:
        return _UNDECIDED
    kind = desc.annotation
    if not multi:
        return _plain_item(kind, value, info, param, ctx)
    if get_origin(kind) is not list or type(value) not in (list, tuple):
        return _UNDECIDED  # a tuple type, or one text where typer asks for an iterable
    (item_kind,) = get_args(kind)
    items = [_plain_item(item_kind, v, info, param, ctx) for v in value]
    return _UNDECIDED if any(v is _UNDECIDED for v in items) else items


def _plain_item(kind: Any, value: Any, info: Any, param: Any, ctx: Any) -> Any:
    """:func:`_plain_value` of one value of type ``kind``."""
    if kind is str:
        return value if type(value) is str else _UNDECIDED
    if kind is int:
        if type(value) is str and _DIGITS.fullmatch(value):
            value = int(value)
        if type(value) is not int:
            return _UNDECIDED
        low, high = info.min, info.max  # out of bounds: typer's message (or its clamp)
        within = (low is None or value >= low) and (high is None or value <= high)
        return value if within else _UNDECIDED
    plain_path = type(value) is str and value and "\x00" not in value and str(Path(value)) == value
    if kind is Path and info.path_type is None and plain_path:
        from typer._param_types import coerce_cli_path

        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return _UNDECIDED


class _PlainCoercion:
    """A parameter's coercion (typer's ``get_runtime_param()``) that answers the plain values
    itself (:func:`_plain_value`) and hands every other to typer's, which builds a pydantic
    adapter: a command given plain values never imports pydantic (~80 ms of CPU)."""

    def __init__(self, typer_runtime: Any) -> None:
        self._typer_runtime = typer_runtime

    def __call__(self) -> _PlainCoercion:
        return self

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            plain = _plain_value(param, value, ctx)
        except (AttributeError, ImportError, TypeError):  # typer's internals moved: its own way
            plain = _UNDECIDED
        if plain is _UNDECIDED:
            return self._typer_runtime().coerce(value, param=param, ctx=ctx)
        return plain


def _plain_coercion(params: list[Any]) -> list[Any]:
    """Each parameter coerced by :class:`_PlainCoercion` (a typer without runtime coercion,
    before 0.2x, is left as it is)."""
    for p in params:
        runtime = getattr(p, "get_runtime_param", None)
        typer_runtime = callable(runtime) and not isinstance(runtime, _PlainCoercion)
        if typer_runtime and hasattr(p, "type_descriptor"):
            p.get_runtime_param = _PlainCoercion(runtime)
    return params


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_labels(_plain_coercion(super().get_params(ctx)), ctx)


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_labels(_plain_coercion(super().get_params(ctx)), ctx)


#: Every command in help order: its name, the module of ``deflectbench.cli`` defining it and
#: the function (or, for a sub-app, the typer app; its own commands are in :data:`SUBCOMMANDS`).
COMMANDS: dict[str, tuple[str, str]] = {
    "spec": ("spec", "spec"),
    "run": ("run", "run"),
    "judge": ("run", "judge"),
    "status": ("run", "status"),
    "analyze": ("results", "analyze"),
    "report": ("results", "report"),
    "audit": ("audit", "audit"),
    "import": ("results", "import_"),
    "merge": ("merge", "merge"),
    "import-batch": ("batch_file", "import_batch"),
    "export": ("results", "export"),
    "validate": ("validate", "validate"),
    "mutate": ("mutate", "mutate"),
    "calibrate": ("calibrate", "calibrate"),
    "plan": ("plan", "plan"),
    "compare": ("compare", "compare"),
    "leaderboard": ("leaderboard", "leaderboard"),
    "monitor": ("monitor", "monitor"),
    "annotate": ("web", "annotate"),
    "view": ("web", "view"),
    "batch": ("batch", "batch_app"),
}
#: A sub-app's commands: name -> function of the sub-app's module.
SUBCOMMANDS: dict[str, dict[str, str]] = {"batch": {"cancel": "cancel"}}


def _no_options() -> None:
    """The callback of the one-command app a command is built in (it makes that app a group)."""


def build_command(name: str) -> Any:
    """The click command (or group) of :data:`COMMANDS`' ``name``, built as typer builds a
    registered one: in a throwaway app, whose group is then dropped."""
    module_name, attr = COMMANDS[name]
    module = import_module(f"deflectbench.cli.{module_name}")
    target = getattr(module, attr)
    holder = typer.Typer(add_completion=False, rich_markup_mode="markdown")
    holder.callback()(_no_options)
    if isinstance(target, typer.Typer):
        known = {c.name for c in target.registered_commands}
        for sub, function in SUBCOMMANDS.get(name, {}).items():
            if sub not in known:  # once per process, however many apps are built
                target.command(sub, cls=_Command)(getattr(module, function))
        holder.add_typer(target, name=name, cls=_Group)
    else:
        holder.command(name, cls=_Command)(target)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


class _Commands(MutableMapping[str, Any]):
    """The root group's commands: every name of :data:`COMMANDS` listed, each built on first
    access (``get`` builds one; iterating names builds none), then any registered on the app
    the usual way (``app.command()``), which typer built already."""

    def __init__(self, built: MutableMapping[str, Any]) -> None:
        #: Every name, in help order: a command, or None until it is first asked for.
        self._commands: dict[str, Any] = {**dict.fromkeys(COMMANDS), **built}

    def __getitem__(self, name: str) -> Any:
        if self._commands[name] is None:
            self._commands[name] = build_command(name)
        return self._commands[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._commands[name] = command

    def __delitem__(self, name: str) -> None:
        del self._commands[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._commands)

    def __len__(self) -> int:
        return len(self._commands)


class _RootGroup(_Group):
    """The app's group, with :class:`_Commands`: only the command that runs is imported."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names, without building the commands


app = typer.Typer(
    name="deflectbench",
    cls=_RootGroup,
    help=(
        "Measure whether language models produce deflection fallacies (whataboutism, ad hominem, "
        "red herring) when asked, and how they refuse, hedge, label or cleanly comply.\n\n"
        "Start with `deflectbench run`: with no arguments it runs the quick preset on the bundled "
        "local model (no keys, no network) and prints a table per framing."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="markdown",
)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        from deflectbench import __version__  # read from the installed metadata, on demand

        console.print(f"deflectbench {__version__}")
        raise typer.Exit()


#: Errors the user can fix (a bad name, key, file or option), by the module defining each.
_USER_ERRORS = (
    ("deflectbench.benchmark.definition", "BenchmarkError"),
    ("deflectbench.conditions", "ConditionError"),
    ("deflectbench.errors", "ConfigError"),
    ("deflectbench.vocab", "ConsensusError"),
    ("deflectbench.judging.judges", "UnknownJudgeError"),
    ("deflectbench.models.base", "ModelError"),
    ("deflectbench.models.registry", "UnknownModelError"),
    ("deflectbench.store.files", "StoreError"),
    ("deflectbench.interop.release", "InteropError"),
    ("deflectbench.views.report.build", "ReportError"),
    ("deflectbench.web.server", "WebError"),
)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors the user can fix: one line, exit code 2. Only those of modules already loaded: an
    error of a module never imported cannot have been raised, and importing them all here (the
    report's pandas and matplotlib among them) would make a mistyped command slow."""
    loaded = (sys.modules.get(module) for module, _ in _USER_ERRORS)
    found = (getattr(m, name, None) for m, (_, name) in zip(loaded, _USER_ERRORS, strict=True) if m)
    return (UserError, *(e for e in found if isinstance(e, type)))


_EXTRA = re.compile(r"unexpected extra arguments?(?:\(s\))? \((.*)\)", re.DOTALL)


def _store_hint(exc: Exception) -> str | None:
    """The line to type instead when a store was given as an argument to a command that reads
    it from ``--db`` (``deflectbench analyze results.db``: only compare, merge and the like
    take stores as arguments), else None."""
    command = getattr(getattr(exc, "ctx", None), "command", None)
    said = _EXTRA.search(str(getattr(exc, "message", "")))
    if said is None or not any(p.name == "db" for p in getattr(command, "params", ())):
        return None
    words = said.group(1)
    stores = [w for w in (words, *words.split()) if Path(w).is_file()]
    if not stores:
        return None
    name = getattr(command, "name", "COMMAND")
    return (
        f"hint: {name} reads its store from --db: deflectbench {name} --db {shlex.quote(stores[0])}"
    )


def _scrub(text: str) -> str:
    """:func:`deflectbench.secrets.scrub`, imported when an error is shown (a command that
    succeeds never needs it)."""
    from deflectbench.secrets import scrub as scrubbed

    return scrubbed(text)


def main() -> None:
    """Entry point: run the app, turning known errors into one line and exit code 2."""
    try:
        rc = app(standalone_mode=False, prog_name="deflectbench")
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except _user_errors() as exc:
        err.print(
            f"[bold red]error:[/] {escape(_scrub(str(exc)))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except KeyboardInterrupt:
        err.print(
            "interrupted: everything finished so far is stored; run the same command to resume"
        )
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    except Exception as exc:  # click usage errors and the unexpected
        # typer may bundle its own click: recognise usage errors by their interface
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            if (hint := _store_hint(exc)) is not None:
                err.print(escape(hint), highlight=False, soft_wrap=True)
            sys.exit(code)
        if os.environ.get("DEFLECTBENCH_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(_scrub(str(exc)))} "
            "(set DEFLECTBENCH_DEBUG=1 for the traceback, and please report it)",
            highlight=False,
        )
        sys.exit(1)
