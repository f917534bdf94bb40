"""Words a newcomer reads (issue 23, item 13), at 80 terminal columns: no help text renders a
line as a block quote (">= 0.5" read as "= 0.5"), and `spec --list` never cuts a pack id a
user must type after --benchmark."""

from __future__ import annotations

import io
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deflectbench.benchmark import shipped_packs
from support.in_process import run_cli

COMMANDS = ["run", "judge", "status", "analyze", "report", "audit", "validate", "calibrate",
            "annotate", "view", "import", "export", "spec", "batch"]  # fmt: skip


def cli(*args: str):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_cli(*args, env=env | {"COLUMNS": "80"})


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_line_is_a_block_quote(command):
    p = cli(command, "--help")
    assert p.returncode == 0, p.stderr
    assert "▌" not in p.stdout, p.stdout  # rich's block quote: a docstring line began with ">"


def test_analyze_help_says_at_least_one_half():
    text = " ".join(cli("analyze", "--help").stdout.split())
    assert "at least 0.5" in text


def test_spec_list_never_cuts_a_pack_id_at_80_columns():
    p = cli("spec", "--list")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for name in shipped_packs():
        assert any(line.split()[:1] == [name] for line in lines), (name, p.stdout)
    assert "…" not in p.stdout
    assert all(len(line) <= 80 for line in lines[:-1])
    print(p.stdout)


# -- names broken only at their own separators (issue 33, point 7) ------------------------

#: After a separator, a name may go on at the start of a later line (past the rest of this
#: one and a table's rule); anywhere else its characters must follow each other.
_GAP = r"(?:[^\n]*\n[│┃ ]*)?"


def whole_or_broken_at_separators(name: str, text: str) -> bool:
    """Whether ``name`` is in ``text`` whole, or broken only after one of its / - _."""
    pattern = "".join(re.escape(c) + (_GAP if c in "/-_" else "") for c in name)
    return re.search(pattern, text) is not None


def test_the_line_breaker_is_richs_wherever_every_word_fits():
    from rich._wrap import divide_line as richs

    from deflectbench.cli.console import divide_line

    @given(st.text(alphabet="ab /-_.\n", max_size=60), st.integers(1, 30), st.booleans())
    def same(text: str, width: int, fold: bool) -> None:
        if all(len(w) <= width for w in text.split()):
            assert divide_line(text, width, fold) == richs(text, width, fold)

    same()


def test_a_long_name_breaks_after_its_separators():
    from rich.console import Console

    import deflectbench.cli.console  # noqa: F401  (installs the line breaker)

    c = Console(width=16, file=io.StringIO(), color_system=None)
    c.print("see openai/gpt-5.4-mini and docs/configuration.md", overflow="ellipsis")
    lines = [x.rstrip() for x in c.file.getvalue().splitlines()]
    # rich alone: "openai/gpt-5.4-…" and "docs/configurat…" (or, folded, "mini" cut anywhere)
    assert lines == ["see", "openai/gpt-5.4-", "mini and", "docs/", "configuration.md"]


@pytest.mark.parametrize("command", ["run", "judge", "report", "import"])
def test_help_at_80_columns_cuts_no_name_mid_word(command):
    wide = run_cli(command, "--help", env={**os.environ, "COLUMNS": "400"}).stdout
    narrow = cli(command, "--help").stdout
    assert "…" not in narrow, narrow
    names = set(re.findall(r"\b(?:docs|openai|anthropic)/[\w./-]*\w", wide))
    assert names or command == "import"
    for name in names:
        assert whole_or_broken_at_separators(name, narrow), (name, narrow)


LONG = ["openai-compatible/meta-llama/Llama-3.1-8B-Instruct", "anthropic/claude-opus-4-7"]
JUDGES = ["anthropic/claude-haiku-4-5-20251001", "openai/gpt-5.4-mini"]


@pytest.fixture(scope="module")
def long_names_db(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark
    from deflectbench.interop import import_paths
    from deflectbench.store import Store
    from support.fixtures import write_release_fixture

    tmp = tmp_path_factory.mktemp("long-names")
    b = default_benchmark()
    claims = [c.claim_id for c in b.claims][:3]
    write_release_fixture(tmp / "rel", models=LONG, judges=JUDGES, claims=claims, runs=1)
    with Store.open(tmp / "x.db") as store:
        import_paths(store, [tmp / "rel"], b)
    return tmp / "x.db"


@pytest.mark.parametrize("command", ["status", "analyze"])
def test_tables_piped_at_80_columns_cut_no_model_name_mid_word(long_names_db, command):
    p = cli(command, "--db", str(long_names_db))
    assert p.returncode == 0, p.stderr
    assert "…" not in p.stdout, p.stdout
    for name in [*LONG, *JUDGES]:
        assert whole_or_broken_at_separators(name, p.stdout), (name, p.stdout)
    assert all(len(x) <= 80 for x in p.stdout.splitlines() if x.startswith(("│", "┃")))
