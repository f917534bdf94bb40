"""The typer app: its commands in help order, ``--version``, and :func:`main`, which turns
every error the user can fix into one line and an exit code."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from rich.markup import escape

from deflectbench import __version__
from deflectbench.cli import results, run, spec
from deflectbench.cli.console import UserError, console, err
from deflectbench.secrets import scrub

app = typer.Typer(
    name="deflectbench",
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
app.command()(spec.spec)
app.command()(run.run)
app.command()(run.judge)
app.command()(run.status)
app.command()(results.analyze)
app.command()(results.report)
app.command("import")(results.import_)
app.command()(results.export)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        console.print(f"deflectbench {__version__}")
        raise typer.Exit()


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors the user can fix (a bad name, key, file or option): one line, exit code 2."""
    from deflectbench.benchmark import BenchmarkError
    from deflectbench.conditions import ConditionError
    from deflectbench.errors import ConfigError
    from deflectbench.interop import InteropError
    from deflectbench.judging.judges import UnknownJudgeError
    from deflectbench.models.base import ModelError
    from deflectbench.models.registry import UnknownModelError
    from deflectbench.report import ReportError
    from deflectbench.store import StoreError
    from deflectbench.vocab import ConsensusError

    return (
        UserError,
        BenchmarkError,
        ConditionError,
        ConfigError,
        ConsensusError,
        UnknownJudgeError,
        ModelError,
        UnknownModelError,
        StoreError,
        InteropError,
        ReportError,
    )


def main() -> None:
    """Entry point: run the app, turning known errors into one line and exit code 2."""
    try:
        rc = app(standalone_mode=False)
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
