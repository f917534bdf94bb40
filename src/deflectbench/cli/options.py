"""The options several commands share, declared once, and what turns them into arguments."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar

import typer

from deflectbench.api._common import (
    DEFAULT_DB,
    analysis_options,
    fit_resamples,
    pick_benchmark,
    run_file_benchmark,
    split,
    stored_benchmark,
)

if TYPE_CHECKING:
    from deflectbench.store import Store

__all__ = [
    "DEFAULT_DB",
    "analysis_options",
    "fit_resamples",
    "open_store",
    "pick_benchmark",
    "print_result",
    "run_file_benchmark",
    "split",
    "stored_benchmark",
    "write_json",
]

DbOption = Annotated[
    Path,
    typer.Option(
        "--db",
        help="The results file (SQLite): `run` and `import` create it; the other commands "
        "read one that exists.",
        envvar="DEFLECTBENCH_DB",
    ),
]
ConsensusOption = Annotated[
    str,
    typer.Option(
        metavar="mean|all|judge:NAME",
        help="How judges combine per field: mean (the release's rule: mean >= 0.5, so with two "
        "judges a 1 from either wins), all (every judge says 1), or judge:NAME (one judge's word).",
    ),
]
AnalysisJudgesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        "-j",
        help="Only these judges (repeat or comma-separate); default: every judge in the file.",
    ),
]
ResamplesOption = Annotated[
    int, typer.Option(min=1, help="Block-bootstrap resamples of the claims for the 95% CIs.")
]
#: ``--annotator`` and ``--include-unsure``: which human labels ``validate`` and ``calibrate`` use.
AnnotatorsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--annotator",
        "-a",
        help="Only these annotators' labels (repeat or comma-separate); default: everyone's.",
    ),
]
IncludeUnsureOption = Annotated[
    bool,
    typer.Option(
        help="Keep labels their annotator marked unsure (left out by default: a validation "
        "set should hold what people are sure of)."
    ),
]
ProgressOption = Annotated[bool, typer.Option(help="Show progress bars.")]
AllowSelfJudgingOption = Annotated[
    bool,
    typer.Option(
        "--allow-self-judging",
        help="Let a judge be one of the models tested, whose answers the store holds (refused "
        "by default: a model grading its own answers is biased).",
    ),
]
BenchmarkOption = Annotated[
    str | None,
    typer.Option(
        "--benchmark",
        metavar="NAME|FILE",
        help="The benchmark pack: a shipped pack's name (`deflectbench spec --list`: "
        "deflectbench-v1, the paper's, is the default) or a pack file of your own "
        "(docs/packs.md).",
        show_default=False,
    ),
]


def open_store(db: Path, *, must_exist: bool = False) -> Store:
    """:func:`deflectbench.api._common.open_store`, a lock wait said on stderr in yellow."""
    from deflectbench.api._common import open_store as open_results

    return open_results(db, must_exist=must_exist, on_busy=said_busy)


def write_json(data: Any, json_out: Path | None) -> bool:
    """Write ``--json`` output: to stdout for ``-`` (True: print nothing else), else to the file
    (a failure is one line)."""
    import json
    import sys

    from deflectbench.cli.console import UserError

    if json_out is None:
        return False
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if str(json_out) == "-":
        from deflectbench.escaping import json_line_safe

        sys.stdout.write(json_line_safe(text))  # the same JSON, no character a terminal acts on
        return True
    try:
        json_out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write --json {json_out}: {exc.strerror or exc}") from None
    return False


class _Typed(Protocol):
    def to_json(self) -> Any: ...


_R = TypeVar("_R", bound=_Typed)


def print_result(
    result: _R, render: Callable[[_R], Iterable[Any]], json_out: Path | None, label: str
) -> None:
    """A command's end: ``--json`` output (:func:`write_json`), else the tables ``render``
    makes of ``result``, then ``LABEL: PATH`` when the JSON went to a file."""
    from deflectbench.cli.console import console

    if write_json(result.to_json(), json_out):
        return
    for part in render(result):
        console.print(part)
    if json_out is not None:
        console.print(f"{label}: {json_out.resolve()}", highlight=False, markup=False)


#: ``--correction`` (the choices as in ``analysis.calibration.corrected.CORRECTIONS``).
CorrectionOption = Annotated[
    str,
    typer.Option(
        metavar="ppi|rogan-gladen|none",
        help="How human labels correct the judges' rates: ppi (default; PPI++, the judged "
        "rate plus the labelled items' mean error, power-tuned), rogan-gladen (the judged rate "
        "through the consensus' sensitivity and specificity) or none (judged rates only). "
        "Applies when the store holds human labels of the pack (docs/validity.md).",
    ),
]
#: ``--pool-models``: one calibration for every model.
PoolModelsOption = Annotated[
    bool,
    typer.Option(
        "--pool-models",
        help="Measure the judges' error with every model's labels together and correct each "
        "model by Rogan-Gladen (default: each model's own labels, as a judge errs differently "
        "on different models).",
    ),
]
#: ``--judge-values``: the paper's ``said`` by default (the choices as in
#: ``analysis.options.JUDGE_VALUES``, not imported here so ``--help`` stays fast).
JudgeValuesOption = Annotated[
    str,
    typer.Option(
        metavar="rules|said",
        help="Which judge values to combine: said (default; what each judge replied, the "
        "paper's definition) or rules (each verdict after the rubric's rules: a refusal zeroes "
        "the other fields, clean compliance is re-derived from them).",
    ),
]


def said_busy(message: str) -> None:
    """A wait for another process's write lock, said on stderr in yellow (the ``on_busy`` the
    commands hand the public functions)."""
    from deflectbench.cli.console import err

    err.print(f"[yellow]{message}[/]", highlight=False)


def json_file_option(what: str) -> Any:
    """``--json FILE``: a command's result also written as JSON (``-``: only the JSON)."""
    return typer.Option(
        "--json",
        metavar="FILE",
        help=f"Also write {what} as JSON to FILE; `-` prints only the JSON.",
    )
