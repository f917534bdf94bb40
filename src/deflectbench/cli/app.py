"""The typer app: its commands in help order, ``--version``, and :func:`main`, which turns
every error the user can fix into one line and an exit code."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from deflectbench.cli import audit, batch, calibrate, monitor, results, run, spec, validate, web
from deflectbench.cli.console import UserError, console, err
from deflectbench.secrets import scrub

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


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_labels(super().get_params(ctx), ctx)


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_labels(super().get_params(ctx), ctx)


app = typer.Typer(
    name="deflectbench",
    cls=_Group,
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
app.command(cls=_Command)(spec.spec)
app.command(cls=_Command)(run.run)
app.command(cls=_Command)(run.judge)
app.command(cls=_Command)(run.status)
batch.batch_app.command("cancel", cls=_Command)(batch.cancel)
app.add_typer(batch.batch_app, name="batch", cls=_Group)
app.command(cls=_Command)(results.analyze)
app.command(cls=_Command)(results.report)
app.command(cls=_Command)(audit.audit)
app.command("import", cls=_Command)(results.import_)
app.command(cls=_Command)(results.export)
app.command(cls=_Command)(validate.validate)
app.command(cls=_Command)(calibrate.calibrate)
app.command(cls=_Command)(monitor.monitor)
app.command(cls=_Command)(web.annotate)
app.command(cls=_Command)(web.view)


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
    ("deflectbench.report.build", "ReportError"),
    ("deflectbench.web.server", "WebError"),
)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors the user can fix: one line, exit code 2. Only those of modules already loaded: an
    error of a module never imported cannot have been raised, and importing them all here (the
    report's pandas and matplotlib among them) would make a mistyped command slow."""
    loaded = (sys.modules.get(module) for module, _ in _USER_ERRORS)
    found = (getattr(m, name, None) for m, (_, name) in zip(loaded, _USER_ERRORS, strict=True) if m)
    return (UserError, *(e for e in found if isinstance(e, type)))


def main() -> None:
    """Entry point: run the app, turning known errors into one line and exit code 2."""
    try:
        rc = app(standalone_mode=False, prog_name="deflectbench")
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except _user_errors() as exc:
        err.print(f"[bold red]error:[/] {escape(scrub(str(exc)))}", highlight=False, soft_wrap=True)
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
        if callable(getattr(exc, "show", None)) and isinstance(
            getattr(exc, "exit_code", None), int
        ):
            exc.show()
            sys.exit(exc.exit_code)
        if os.environ.get("DEFLECTBENCH_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(scrub(str(exc)))} "
            "(set DEFLECTBENCH_DEBUG=1 for the traceback, and please report it)",
            highlight=False,
        )
        sys.exit(1)
