"""Help that teaches, read through the real entry point: file patterns shown as written, no
type labels on switches, choices listed, and every command's first example runs as shown."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from deflectbench.analysis.compat.quirks import COMPAT_MODES
from deflectbench.analysis.options import JUDGE_VALUES
from deflectbench.cli.app import app
from deflectbench.interop import FORMATS
from deflectbench.vocab import CONSENSUS_RULES


def _walk(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], bool]]:
    """Every command reachable from ``group``, sub-apps' own included, as (words, is a group),
    read from the click command the entry point runs, so a sub-app added later is covered."""
    for name, command in group.commands.items():
        sub = getattr(command, "commands", None)  # a group, whichever click typer bundles
        yield (*path, name), sub is not None
        if sub is not None:
            yield from _walk(command, (*path, name))


_TREE = list(_walk(typer.main.get_command(app)))
#: The commands a user runs, as typed after ``deflectbench`` (``batch cancel``).
COMMANDS = [" ".join(words) for words, group in _TREE if not group]
#: The sub-apps (``batch``): their own --help lists their commands.
GROUPS = [" ".join(words) for words, group in _TREE if group]
#: First examples that are too slow to run here (a report draws every figure), or that would
#: run the local model: appended to them, this flag still checks that every option parses.
INSTEAD = {
    "run": "--dry-run",
    "report": "--help",
    "view": "--help",  # serves until stopped
    "import-batch": "--help",  # needs a batch engine's output
}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env.update(COLUMNS="250", TERMINAL_WIDTH="250")  # no wrapping: one example per line
    cmd = [sys.executable, "-m", "deflectbench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


_HELP: dict[str, str] = {}
#: How far a code block (an example) is indented in rich's help; prose is one space in.
CODE_INDENT = "  "


def help_of(command: str | None) -> str:
    key = command or ""
    if key not in _HELP:
        p = cli(*key.split(), "--help")
        assert p.returncode == 0, p.stderr
        _HELP[key] = p.stdout
    return _HELP[key]


def examples(command: str) -> list[list[str]]:
    """The example command lines of a command's help, as arguments after ``deflectbench``
    (comments dropped; a pipe or a redirection ends the command). An example is shown as a
    code block, indented past the prose, so it reads as something to type."""
    out = []
    for line in help_of(command).splitlines():
        if not re.match(rf"\s*deflectbench {command}\b", line):
            continue
        assert line.startswith(CODE_INDENT), f"example shown as prose: {line.strip()!r}"
        words = shlex.split(line.strip().strip("│").strip(), comments=True)
        cut = next((i for i, w in enumerate(words) if w in ("|", ">", ">>")), len(words))
        out.append(words[1:cut])
    return out


def test_every_command_is_covered():
    assert set(COMMANDS) == {
        "spec",
        "run",
        "judge",
        "status",
        "analyze",
        "report",
        "audit",
        "import",
        "merge",
        "import-batch",
        "export",
        "validate",
        "mutate",
        "calibrate",
        "plan",
        "compare",
        "leaderboard",
        "monitor",
        "annotate",
        "view",
        "batch cancel",
    }
    assert GROUPS == ["batch"]


@pytest.mark.parametrize("command", [None, *GROUPS, *COMMANDS])
def test_no_type_labels_on_switches_nor_python_types(command):
    text = help_of(command)
    assert "<bool>" not in text
    assert not re.search(r"<(bool|str|int|float|path|list\[)", text, re.I), text
    assert "Usage: deflectbench" in text  # the name the user types, also under python -m


def test_file_patterns_are_shown_as_written():
    text = help_of("import")
    assert "generations_*.jsonl" in text and "evals_*.jsonl" in text
    text = help_of("export")
    assert "generations_*.jsonl" in text and "evals_*.jsonl" in text


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_choices_are_listed(command):
    text = help_of(command)
    assert "|".join(JUDGE_VALUES) in text  # --judge-values rules|said
    assert "|".join(COMPAT_MODES) in text  # --compat paper|release
    consensus = re.search(r"│\s+--consensus\s+(\S+)", text)  # the options panel
    assert consensus, text
    assert [r.split(":")[0] for r in CONSENSUS_RULES] == [
        r.split(":")[0] for r in consensus.group(1).split("|")
    ]


def test_export_formats_are_listed():
    assert "|".join(FORMATS) in help_of("export")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_example_parses(command):
    found = examples(command)
    assert found, f"{command} --help shows no example"
    for args in found:
        assert args[: len(command.split())] == command.split()
        p = cli(*args, "--help")
        assert p.returncode == 0, (args, p.stderr)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder where the examples' files exist: the release's ``release/data/`` (a small
    fixture) and ``deflectbench.db``, the default results file, holding it."""
    from support.fixtures import write_release_fixture

    root = tmp_path_factory.mktemp("examples")
    claims = ["L1_US_01", "L2_INT_02", "L3_US_03", "L4_INT_04"]
    write_release_fixture(root / "release", models=("gpt-5.5", "grok-4.3"), claims=claims, runs=1)
    p = cli("import", "release/data/", cwd=root)
    assert p.returncode == 0, p.stderr
    return root


@pytest.mark.parametrize("command", COMMANDS)
def test_the_first_example_runs_as_shown(command, workdir):
    args = examples(command)[0]
    extra = [INSTEAD[command]] if command in INSTEAD else []
    p = cli(*args, *extra, cwd=workdir)
    assert p.returncode == 0, (args, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr


# -- small defects the user sees -----------------------------------------------------------


def test_a_stage_with_nothing_to_do_shows_no_bar():
    """A resumed run's finished stage once showed ``0/0 ... ETA -:--:--``."""
    from deflectbench.cli.progress import StageBars

    with StageBars(enabled=True) as bars:
        advance = bars.stage("generate local/smollm2", 0)
        advance(True)  # harmless if called
        assert bars.progress.tasks == []
        advance = bars.stage("judge lexical", 3)
        advance(True)
        advance(False)
        (task,) = bars.progress.tasks
        assert (task.completed, task.total) == (2, 3)
