"""The report pages' filters written the quick way give what the templates wrote before (kept
here as the reference): Markdown-safe text, a judge's fields on one line, a verdict's cells."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.views.report.page import _environment, _md_fields, _md_text
from deflectbench.views.report.tables import FIELD_SHORT
from deflectbench.vocab import FIELDS

_MD_ESCAPES = str.maketrans({ch: "\\" + ch for ch in "\\`*_{}[]()#!|~"})

_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.text(
    st.sampled_from("\\`*_{}[]()#!|~<>&a \n"), max_size=40
)


@settings(max_examples=500, deadline=None)
@given(_texts)
def test_md_text_is_the_translate(text):
    assert _md_text(text) == text.translate(_MD_ESCAPES)


_verdict = st.sampled_from([None, 0, 1])
_fields = st.fixed_dictionaries({f: _verdict for f in FIELDS})

_OLD_MD_LINE = (
    "[{% for f in fields %}{{ field_short[f] }}={{ '–' if v[f] is none else v[f] }}"
    "{{ ' ' if not loop.last }}{% endfor %}]"
)
_OLD_HTML_CELLS = (
    "{% macro verdict(v) %}<td class=\"v v{{ 'x' if v is none else v }}\">"
    "{{ '–' if v is none else v }}</td>{% endmacro %}"
    "{% for f in fields %}{{ verdict(v[f]) }}{% endfor %}"
)
_NEW_HTML_CELLS = (
    "{% for f in fields %}{% set x = v[f] %}<td class=\"v v{{ 'x' if x is none else x }}\">"
    "{{ '–' if x is none else x }}</td>{% endfor %}"
)


@settings(max_examples=200, deadline=None)
@given(_fields)
def test_a_judges_fields_read_as_the_templates_wrote_them(v):
    md, html = _environment("md"), _environment("html")
    context = {"v": v, "fields": list(FIELDS), "field_short": FIELD_SHORT}
    assert md.from_string("[{{ v|md_fields }}]").render(**context) == md.from_string(
        _OLD_MD_LINE
    ).render(**context)
    assert _md_fields(v).count("=") == len(FIELDS)
    assert html.from_string(_NEW_HTML_CELLS).render(**context) == html.from_string(
        _OLD_HTML_CELLS
    ).render(**context)
