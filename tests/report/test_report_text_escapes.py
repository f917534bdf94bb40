"""The report's faster escapes write what the first, per-character ones wrote: Markdown's
markup escaped in model text, SVG attributes escaped and an element at a missing coordinate
left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deflectbench.views.report.page import _md_text
from deflectbench.views.report.svg import _PLACES, Svg, escape


def md_text_reference(value: object) -> str:
    out = []
    for ch in str(value):
        out.append("\\" + ch if ch in "\\`*_{}[]()#!|~" else ch)
    return "".join(out)


class SvgReference(Svg):
    def _el(self, tag: str, attrs: dict[str, object], body: str | None = None) -> None:
        if any(k in _PLACES and "n" in str(v) for k, v in attrs.items()):
            return
        a = "".join(
            f' {k.rstrip("_").replace("_", "-")}="{escape(v)}"'
            for k, v in attrs.items()
            if v is not None
        )
        self.parts.append(f"<{tag}{a}/>" if body is None else f"<{tag}{a}>{body}</{tag}>")


_markup = st.text(st.sampled_from("\\`*_{}[]()#!|~<>&\"' aZ\n\u202e"), max_size=20)


@given(st.one_of(st.text(), _markup, st.integers(), st.none()))
def test_md_text_equals_the_per_character_escape(value):
    assert _md_text(value) == md_text_reference(value)


_keys = st.sampled_from(["x", "y", "width", "points", "fill", "stroke_width", "class_", "rx"])
_values = st.one_of(
    st.none(),
    st.sampled_from(["nan", "inf", "1.5", "0", "#fff", "url(#h0)", "a<b>&\"'"]),
    st.text(max_size=6),
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["rect", "line", "text"]),
            st.dictionaries(_keys, _values, max_size=5),
            st.one_of(st.none(), st.text(max_size=5)),
        ),
        max_size=6,
    )
)
def test_svg_elements_equal_the_first_writer(elements):
    fast, first = Svg(100, 50, "t"), SvgReference(100, 50, "t")
    for tag, attrs, body in elements:
        fast._el(tag, attrs, body)
        first._el(tag, attrs, body)
    assert fast.parts == first.parts
