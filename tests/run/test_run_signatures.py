"""The run path passes one context, not a dozen values: no function on it takes more than 7
parameters (keyword-only ones counted, ``self`` not), and the stop check is one method.

A setting every stage needs belongs in :class:`~deflectbench.pipeline.RunContext`; a command's
flags in one dataclass (:mod:`deflectbench.cli.flags`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deflectbench.pipeline import RunContext
from deflectbench.store import Store

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "deflectbench"
#: The modules a run goes through, from the command line down to the lanes.
RUN_PATH = sorted(
    [
        PACKAGE / "execute.py",
        PACKAGE / "dry_run.py",
        *(PACKAGE / "pipeline").rglob("*.py"),
        PACKAGE / "cli" / "run.py",
        PACKAGE / "cli" / "run_output.py",
        PACKAGE / "api" / "batches.py",
        PACKAGE / "cli" / "live.py",
        PACKAGE / "cli" / "progress.py",
        PACKAGE / "cli" / "flags.py",
    ]
)
MAX_PARAMETERS = 7


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


@pytest.mark.parametrize("path", RUN_PATH, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_on_the_run_path_takes_more_than_seven_parameters(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [
        f"{node.name} (line {node.lineno}): {len(_parameters(node))}"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(_parameters(node)) > MAX_PARAMETERS
    ]
    assert not long, f"{path.name}: more than {MAX_PARAMETERS} parameters: {long}"


@pytest.mark.parametrize("path", RUN_PATH, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_stop_check_is_never_spelled_out(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "should_stop is not None and" not in text or path.name == "context.py"
    assert "should_stop and should_stop()" not in text


def test_a_context_stops_when_its_check_says_so(tmp_path: Path, benchmark) -> None:
    with Store.open(tmp_path / "x.db") as store:
        assert not RunContext(store, benchmark).stopped()
        asked = [False]
        ctx = RunContext(store, benchmark, use_cache=False, should_stop=lambda: asked[0])
        assert not ctx.stopped() and ctx.cache is None
        asked[0] = True
        assert ctx.stopped()
        assert RunContext(store, benchmark).cache is store
