"""The report's "Benchmark packs" section: the packs a store holds side by side, the language
factor (a table and a figure), and each pack against the pack it is based on, template by
template (e.g. the controlled pack against v1). Shown only when the store holds more than one
pack; every number comes from the summary's :class:`~deflectbench.analysis.summary.packs.PackComparison`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.small_sample import PACKS
from deflectbench.views.format import ci, count, num, pct
from deflectbench.views.report.chart import (
    FALLACY_LABELS,
    INK,
    Chart,
    model_style,
    styled_figure,
)
from deflectbench.views.report.svg import LegendItem
from deflectbench.views.report.svg_charts import grouped_bars_svg
from deflectbench.views.report.tables import Table, few_claims_line, make_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PACK_FIGURES", "PACK_TABLES", "language_chart", "pack_tables"]

#: The section's figure and tables (names of their files).
PACK_FIGURES = ("refusal_by_language",)
PACK_TABLES = ("packs", "packs_by_language", "packs_by_template", "packs_by_fallacy")
TEMPLATE_HEADER = [
    *("pack vs base", "model", "template", "fallacy", "n base", "n pack"),
    *("refusal base", "refusal pack", "diff (pts)", "h", "clean base", "clean pack"),
]


def pack_tables(s: Summary) -> list[Table]:
    """The packs present, the language factor, template by template against the base pack,
    and refusal per requested fallacy per pack; none when the store holds one pack."""
    p = s.packs
    if p is None:
        return []
    packs = make_table(
        "packs",
        "Benchmark packs in this store (each analysed alone, never pooled)",
        p.packs,
        ["pack", "language", "turns", "based on", "judges", "attempted", "scored", "models"],
        [
            [
                r.pack + (" (this report)" if r.analysed else ""),
                r.language,
                str(r.turns),
                r.based_on if isinstance(r.based_on, str) else "-",
                r.judges or "-",
                count(r.attempted),
                count(r.scored),
                count(r.models),
            ]
            for r in p.packs.itertuples()
        ],
        left=5,
        note=" ".join(
            [
                *(
                    [
                        "Each pack is scored with the judges that judged it; a comparison across "
                        "two packs uses the judges both have."
                    ]
                    if len(set(p.judges.values())) > 1
                    else []
                ),
                *p.notes,
                *(
                    ["Not compared (not a shipped pack): " + ", ".join(p.unknown)]
                    if p.unknown
                    else []
                ),
            ]
        ),
    )
    by_language = _table_of_rows(
        "packs_by_language",
        "Language: each model's outcomes in the paper's pack and its translations",
        p.by_language,
        ["model", "language", "pack", "n", "refusal (95% CI)", "soft", "labeled", "clean", "h"],
        lambda r: (
            [
                r.model,
                r.language,
                r.pack,
                count(r.n),
                ci(r.refusal, r.refusal_lo, r.refusal_hi),
                pct(r.soft_refusal),
                pct(r.labeled_compliance),
                pct(r.clean_compliance),
                num(r.h_refusal_vs_base),
            ]
        ),
        left=3,
        note="h: Cohen's h of refusal against the pack it translates (same model); CIs are "
        "block-bootstrap intervals over claims." + few_claims_line(s, PACKS),
    )
    by_template = _table_of_rows(
        "packs_by_template",
        "Template by template: each pack against the pack it is based on",
        p.by_template,
        TEMPLATE_HEADER,
        lambda r: (
            [
                f"{r.pack} vs {r.based_on}",
                r.model,
                r.prompt_id,
                FALLACY_LABELS.get(r.fallacy_requested, r.fallacy_requested),
                count(r.n_base),
                count(r.n_pack),
                pct(r.refusal_base),
                pct(r.refusal_pack),
                num(r.refusal_diff_pp, "+.1f"),
                num(r.h_refusal, "+.2f"),
                pct(r.clean_base),
                pct(r.clean_pack),
            ]
        ),
        left=4,
        note="Templates with the same id correspond. In deflectbench-v1-controlled every "
        "template names the fictional speaker, so a change on the whataboutism and red herring "
        "templates measures the paper's confound (docs/packs.md).",
    )
    by_fallacy = _table_of_rows(
        "packs_by_fallacy",
        "Refusal per requested fallacy (explicit templates), per pack",
        p.by_fallacy,
        ["pack", "model", "fallacy", "n", "refusal", "swing (pts)"],
        lambda r: (
            [
                r.pack,
                r.model,
                FALLACY_LABELS.get(r.fallacy_requested, r.fallacy_requested),
                count(r.n),
                pct(r.refusal),
                num(r.swing_pp, ".1f"),
            ]
        ),
        left=3,
        note="swing: the model's largest minus smallest refusal across the three fallacies in "
        "that pack; compare v1 with the controlled pack to see how much is the prompt's "
        "structure.",
    )
    return [packs, by_language, by_template, by_fallacy]


def _table_of_rows(
    name: str,
    title: str,
    frame: pd.DataFrame,
    header: Sequence[str],
    row: Callable[[Any], Sequence[str]],
    *,
    left: int,
    note: str,
) -> Table:
    """A table with one row per row of ``frame`` (``row`` lays one out), shown only when
    ``frame`` has rows."""
    rows = [row(r) for r in frame.itertuples()]
    return make_table(name, title, frame, header, rows, left=left, note=note, show=len(frame) > 0)


def language_chart(s: Summary) -> Chart:
    """Refusal per model and language, with 95% CIs: the language factor at a glance."""
    chart = Chart(
        "refusal_by_language",
        "Refusal by language",
        "Each model's refusal rate in the paper's pack and in each translation present in the "
        "store, with 95% block-bootstrap confidence intervals over claims.",
        "Refusal by language per model.",
    )
    lang = s.packs.by_language if s.packs is not None else pd.DataFrame()
    if lang.empty:
        chart.missing = "Only one language in the store."
        return chart
    languages = list(dict.fromkeys(lang.sort_values("language")["language"]))
    models = sorted(lang["model"].unique())
    index = {(r.model, r.language): r for r in lang.itertuples()}
    columns = ("refusal", "refusal_lo", "refusal_hi")
    triples = [
        np.array(
            [
                [
                    100 * getattr(index[(m, lg)], c) if (m, lg) in index else np.nan
                    for lg in languages
                ]
                for c in columns
            ]
        )
        for m in models
    ]  # per model: rate, lo, hi rows over the languages
    width_in = max(6.0, 1.2 + 1.1 * len(languages) * len(models) ** 0.5)

    def draw() -> Figure:
        with styled_figure(width_in, 3.8) as fig:
            ax = fig.add_subplot()
            x = np.arange(len(languages))
            width = 0.8 / max(len(models), 1)
            for i, m in enumerate(models):
                rate, lo, hi = triples[i]
                style = model_style(i)
                pos = x - 0.4 + width * (i + 0.5)
                ax.bar(pos, np.nan_to_num(rate), width * 0.9, color=style["color"], label=m)
                err = np.vstack([np.nan_to_num(rate - lo), np.nan_to_num(hi - rate)])
                ax.errorbar(pos, np.nan_to_num(rate), yerr=err, fmt="none", ecolor=INK, capsize=3)
            ax.set_xticks(x, labels=languages)
            ax.set_ylim(0, 100)
            ax.set_ylabel("refusal (% of scored generations)")
            ax.set_xlabel("language of the prompts")
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return fig

    chart.draw = draw
    series = [
        (LegendItem(m, color=model_style(i)["color"], edge=model_style(i)["color"]), t[0], t[1:])
        for i, (m, t) in enumerate(zip(models, triples, strict=True))
    ]
    chart.svg = partial(
        grouped_bars_svg, chart.title, languages, series, xlabel="language of the prompts",
        ylabel="refusal (% of scored generations)", y_max=100, width=100 * width_in + 150,
        legend_right=True,
    )  # fmt: skip
    chart.alt = "Refusal by language: " + "; ".join(
        f"{m} {lg} {pct(index[(m, lg)].refusal)}"
        for m in models
        for lg in languages
        if (m, lg) in index
    )
    return chart
