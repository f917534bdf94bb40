"""compare's terminal cells are ``Text`` made once (issue 36: no markup parsed per cell); a
cell must print exactly as the escaped markup string it replaced (:func:`safe`), whatever the
text (brackets, backslashes, control codes, bidi overrides), in plain and colour output."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.table import Table

from deflectbench.cli.console import SafeConsole
from deflectbench.views.terminal.compare import cell, safe

texts = st.text(alphabet=st.sampled_from("ab [/]\\@#=x-_\x1b\x07\x9b\u202e\n é"), max_size=30)


def printed(value: object, colour: bool) -> str:
    out = io.StringIO()
    console = SafeConsole(file=out, width=24, force_terminal=colour, soft_wrap=True, emoji=False)
    t = Table(title="t")
    t.add_column("c", overflow="fold")
    t.add_column("n", justify="right")
    t.add_row(value, "1.0%")
    console.print(t)
    return out.getvalue()


@settings(max_examples=150)
@given(texts, st.booleans())
def test_a_text_cell_prints_as_its_escaped_markup(text: str, colour: bool) -> None:
    assert printed(cell(text), colour) == printed(safe(text), colour)


def test_a_missing_value_is_an_empty_cell_as_before() -> None:
    assert printed(cell(float("nan")), False) == printed(safe(float("nan")), False)
