"""The report's words (issue 23, item 13): the appendices are the paper's, all framings are
"all 7" (never "7 of the 7"), one claim is "1 claim", and a command in our prose is code in
the page, never a literal backtick."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.views.report import build_report
from support.report_store import make_store

B = default_benchmark()


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[str, str]:
    work = tmp_path_factory.mktemp("words")
    db = make_store(work / "s.db", B, claims=["L1_US_01"], hostile=False)
    with Store.open(db, readonly=True) as store:
        paths = build_report(store, B, work / "out", AnalysisOptions(n_resamples=20),
                             formats=("svg",))  # fmt: skip
    return html_lib.unescape(Path(paths.html).read_text()), Path(paths.markdown).read_text()


def _text(html: str) -> str:
    """The page's visible text outside <code>, tags dropped."""
    html = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    html = re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_the_appendices_are_the_papers_and_framings_read_naturally(page):
    html, md = page
    for text in (html, md):
        assert "the paper's Appendix E.2" in text and "the paper's Appendix F" in text
        assert "under all 7 framings" in text and "7 of the 7" not in text
        assert "(1 claims)" not in text and "(1 claim)" in text


def test_no_literal_backtick_in_the_page(page):
    html, _ = page
    visible = _text(html)
    assert "`" not in visible, visible[visible.index("`") - 80 : visible.index("`") + 80]
    assert "<code>" in html


def test_the_output_length_figure_has_headroom():
    import pandas as pd

    from deflectbench.views.report.figures_appendix import tokens_chart

    tokens = pd.DataFrame(
        {"model": ["a", "a", "b"], "outcome": ["refusal", "other", "refusal"],
         "mean_tokens": [120.0, 400.0, 300.0]}
    )  # fmt: skip
    chart = tokens_chart(tokens, ["a", "b"], {"a": 260.0, "b": 300.0})
    (ax,) = chart.figure.axes
    assert ax.get_ylim()[1] >= 1.1 * 400.0


def test_long_model_names_break_after_the_provider_in_the_length_figure():
    import pandas as pd

    from deflectbench.views.report.figures_appendix import tokens_chart

    models = ["anthropic/claude-haiku-4-5-20251001", "openai-compatible/Qwen2.5-7B-Instruct"]
    tokens = pd.DataFrame({"model": models, "outcome": ["refusal", "refusal"],
                           "mean_tokens": [100.0, 120.0]})  # fmt: skip
    chart = tokens_chart(tokens, models, {})
    (ax,) = chart.figure.axes
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [
        "anthropic/\nclaude-haiku-4-5-20251001",
        "openai-compatible/\nQwen2.5-7B-Instruct",
    ]
