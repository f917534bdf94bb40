"""The options several commands share, declared once, and what turns them into arguments."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store

DbOption = Annotated[
    Path,
    typer.Option(
        "--db",
        help="The results file (SQLite): `run` and `import` create it; the other commands "
        "read one that exists.",
        envvar="DEFLECTBENCH_DB",
    ),
]
DEFAULT_DB = Path("deflectbench.db")
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
ProgressOption = Annotated[bool, typer.Option(help="Show progress bars.")]
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


def pick_benchmark(value: str | None) -> Benchmark:
    """``--benchmark NAME|FILE`` for commands that make results (default: the paper's pack)."""
    from deflectbench.benchmark import resolve_benchmark

    return resolve_benchmark(value)


def run_file_benchmark(value: str | None, config: Path | None) -> str | None:
    """The run file's ``benchmark``: a pack name, or a path relative to the run file."""
    if value is None or config is None or ("/" not in value and not value.endswith(".json")):
        return value
    path = Path(value)
    return str(path if path.is_absolute() else config.parent / path)


def stored_benchmark(store: Store, value: str | None) -> Benchmark:
    """``--benchmark`` for commands that read results: the pack given, else the one pack the
    store holds; a store holding several packs is an error naming them (never mixed)."""
    from deflectbench.analysis.summary.packs import pack_of_store
    from deflectbench.benchmark import resolve_benchmark

    return pack_of_store(store, resolve_benchmark(value) if value else None)


def split(values: list[str] | None) -> list[str]:
    """Accept both repeated options and comma-separated lists."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def analysis_options(
    consensus: str,
    judges: list[str] | None,
    values: str,
    resamples: int,
    seed: int,
    *,
    fitted_later: bool = False,
) -> AnalysisOptions:
    """The shared analysis flags (--consensus, --judge, --judge-values, --resamples, --seed).
    ``fitted_later``: the command sizes --resamples for its pack (:func:`fit_resamples`) once
    it knows it; here only for one claim (else for the paper's 80)."""
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.config.plan import RESAMPLE_CLAIMS, check_resamples, check_seed

    check_seed(seed)
    check_resamples(resamples, claims=1 if fitted_later else RESAMPLE_CLAIMS)

    return AnalysisOptions.of(
        consensus=consensus,
        judges=split(judges) or None,
        values=values,
        n_resamples=resamples,
        seed=seed,
    )


def fit_resamples(resamples: int, pack: Benchmark) -> int:
    """``--resamples`` sized for ``pack``'s claims (the bootstrap holds resamples x claims at
    once): refused in one line naming the largest that fits when they do not."""
    from deflectbench.config.plan import check_resamples

    return check_resamples(resamples, claims=len(pack.claims))


def open_store(db: Path, *, must_exist: bool = False) -> Store:
    """Open (and migrate) the --db results file; commands that only read need it to exist, so
    a mistyped path is an error, never a new empty store. A wait for another process's write
    lock is announced on stderr."""
    from deflectbench.cli.console import err
    from deflectbench.store import Store, StoreError
    from deflectbench.store.files import check_file

    check_file(db)  # a path that could hold no store is said as such, before "no results"
    if must_exist and not db.exists():
        raise StoreError(f"no results at --db {db}: run `deflectbench run` (or `import`) first")
    store = Store.open(db)
    store.on_busy = lambda message: err.print(f"[yellow]{message}[/]", highlight=False)
    return store


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
