"""A flip's example from the start of a response only (issue 36): the same text as spacing the
whole response out and cutting it, whatever the response and its whitespace."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.compare.flips import EXAMPLE_CHARS, _example


def plainly(text: str) -> str:
    """The example as defined: the whole response's whitespace made single spaces, then cut."""
    text = " ".join(text.split())
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 3] + "..."


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab\u00e9\u4e2d", min_size=1, max_size=30),
            st.text(alphabet=" \n\t\u3000\u00a0", min_size=1, max_size=400),
        ),
        max_size=60,
    )
)
def test_the_start_gives_the_example_the_whole_gives(parts):
    text = "".join(parts)
    assert _example(1, {1: text}) == plainly(text)


def test_a_long_reply_and_a_missing_one():
    assert _example(1, {1: "word " * 2000}) == plainly("word " * 2000)
    assert _example(1, {1: " " * 5000 + "x"}) == "x"
    assert _example(2, {1: "x"}) is None and _example(3, None) == 3
