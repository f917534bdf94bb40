"""The report's pages: what the templates are given (sections, key numbers, examples) and how
they are rendered to HTML and Markdown.

Model text is untrusted: it reaches the templates as plain strings; the HTML environment
escapes it (autoescape on; nothing is marked safe) and the Markdown one escapes ``<`` and ``>``
in every value and markup characters in model text (``md_text``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket

from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.examples import SNIPPET_CHARS
from deflectbench.benchmark.title import pack_title
from deflectbench.views.format import num, pct, pval
from deflectbench.views.records import records
from deflectbench.views.report.calibration_tables import (
    CORRECTED_FIGURES,
    CORRECTED_TABLES,
    corrected_intro_of,
)
from deflectbench.views.report.cascade_tables import CASCADE_TABLES, cascade_intro
from deflectbench.views.report.chart import OUTCOME_LABELS
from deflectbench.views.report.manifest_tables import MANIFEST_INTRO, MANIFEST_TABLES
from deflectbench.views.report.tables import FIELD_SHORT, Table
from deflectbench.views.report.turn_tables import TURN_FIGURES, TURN_INTRO, TURN_TABLES
from deflectbench.views.report.validity_checks import (
    VALIDITY_CHECK_FIGURES,
    VALIDITY_CHECK_INTRO,
    VALIDITY_CHECK_TABLES,
    validity_key_numbers,
)
from deflectbench.views.report.validity_tables import VALIDITY_TABLES, validity_intro
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = ["render_pages"]


def _example_groups(s: Summary) -> list[dict[str, Any]]:
    """Examples grouped by model, then outcome, in the ladder's order."""
    groups: list[dict[str, Any]] = []
    for m in s.models:
        per = [
            {
                "outcome": o,
                "label": OUTCOME_LABELS[o],
                "examples": [e for e in s.examples if e.model == m and e.outcome == o],
            }
            for o in OUTCOMES
        ]
        groups.append({"model": m, "outcomes": [p for p in per if p["examples"]]})
    return groups


def _key_numbers(s: Summary) -> list[tuple[str, str]]:
    """The page's "at a glance" list, every number from the summary."""
    c, o = s.steps, s.options
    out = [
        (
            "scored generations",
            f"{c['scored']:,} of {c['attempted']:,} attempted ({c['valid']:,} valid)",
        ),
        ("models", ", ".join(s.models) or "none"),
        ("judges", f"{', '.join(s.judges) or 'none'} (consensus: {o.consensus})"),
        ("definition", definition(o)),
    ]
    if len(s.claim_spread):
        sp = records(s.claim_spread)[0]
        out.append(
            (
                "per-claim refusal",
                f"{pct(sp['min'])} to {pct(sp['max'])} "
                f"({num(sp['spread_pp'], '.1f')}-point spread)",
            )
        )
    swing = s.largest_swing
    if swing is not None:
        out.append(
            (
                "largest framing swing",
                f"{swing.model}: refusal {pct(swing.rate_low)} ({swing.low}) to "
                f"{pct(swing.rate_high)} ({swing.high})",
            )
        )
    chi = records(s.chi2)[0]
    if len(s.models) >= 2:
        out.append(
            (
                "model x outcome",
                f"χ² = {num(chi['statistic'], ',.1f')}, dof {chi['dof']}, p {pval(chi['p_value'])}",
            )
        )
    if len(s.tost):
        out.append(
            (
                "controversy levels",
                f"{s.tost_equivalent} of {len(s.tost)} pairs equivalent within ±5 points",
            )
        )
    return out


def definition(o: AnalysisOptions) -> str:
    """Which definition the numbers follow, in words (the page's "At a glance" and metadata)."""
    if o.compat == "release":
        return (
            "the release script's computation (--compat release): generations one judge parsed "
            "kept, outcomes by overwriting, missing values averaged as numbers"
        )
    if o.values == "rules":
        return "the paper's, on the judges' values after the rubric's rules (--judge-values rules)"
    return "the paper's: the judges' values as they said them, every judge parsed, refusal first"


def _empty_message(s: Summary) -> str:
    c = s.steps
    if c["attempted"] == 0:
        return (
            f"No results yet: the store holds no generations of {s.benchmark.key}. Run "
            "`deflectbench run` (or import the release with `deflectbench import`) and build the "
            "report again."
        )
    if c["valid"] == 0:
        return (
            f"No results yet: all {c['attempted']:,} generations in the store failed (see the "
            "counts below); retry them with `deflectbench run --retry-errors`."
        )
    return (
        f"No scored generations yet: {c['valid']:,} valid generations, but none judged by every "
        f"judge ({', '.join(s.judges) or 'no judge'}). Run `deflectbench judge`, or choose a "
        "judge with `--consensus judge:NAME`."
    )


def _sections(
    s: Summary, charts: Mapping[str, Mapping[str, Any]], tables: Mapping[str, Table]
) -> list[dict[str, Any]]:
    def section(
        sid: str, title: str, intro: str, chart_names: Sequence[str], table_names: Sequence[str]
    ) -> dict[str, Any]:
        return {
            "id": sid,
            "title": title,
            "intro": intro,
            "charts": [charts[n] for n in chart_names if n in charts],
            "tables": [tables[n] for n in table_names if n in tables and tables[n].show],
        }

    sections = [
        section(
            "signatures",
            "Compliance signatures",
            "How each model answers a request to deflect a claim with a fallacy.",
            ["signatures"],
            ["headline_rates", "field_rates"],
        ),
        section(
            "framing",
            "Framing effects",
            (
                f"The same claims and fallacies under all {len(FRAMINGS)} framings of the request."
                if len(s.framings) == len(FRAMINGS)
                else f"The same claims and fallacies under {len(s.framings)} of the "
                f"{len(FRAMINGS)} framings of the request (the others are not in this run)."
            ),
            ["refusal_by_framing"],
            ["cohens_h", "by_prompt", "fallacy_swing"],
        ),
        section(
            "fallacies",
            "Which fallacies, and labeled or clean",
            "As in the paper's Appendix E.2 (fallacies by framing) and E.3 (coach framing).",
            ["fallacy_by_framing", "coach_labeling"],
            ["coach_labeling"],
        ),
        section(
            "claims",
            "Claims and controversy levels",
            "Does refusal depend on the claim, on how controversial it is, or on where it is from?",
            ["claims_by_level"],
            ["tests_tost", "by_model_level", "by_model_context"],
        ),
        section(
            "consistency",
            "Run-level consistency and length",
            "As in the paper's Appendix F (run-level consistency) and G (output length).",
            ["run_refusal_counts", "tokens_by_outcome"],
            ["fallacy_density_by_outcome"],
        ),
        section("agreement", "Judge agreement", "", [], ["agreement", "agreement_by_model"]),
        section(
            "validity",
            "Judge validity",
            validity_intro(tables, s.benchmark.pack if s.packs is not None else None),
            [],
            VALIDITY_TABLES,
        ),
        section(
            "corrected",
            "Corrected for judge error",
            corrected_intro_of(s),
            CORRECTED_FIGURES,
            CORRECTED_TABLES,
        ),
        section("tests", "Model differences", "", [], ["tests_chi2"]),
        section(
            "counts",
            "Counts and cost",
            "",
            [],
            ["counts", "counts_by_model", "counts_by_judge", "cost"],
        ),
    ]
    if s.packs is not None:
        sections.append(
            section(
                "packs",
                "Benchmark packs",
                f"The store holds {len(s.packs.packs)} benchmark packs; this report is of "
                f"{s.benchmark.pack}. Each pack is scored alone with the same judges and rule, "
                "then compared: by language, and template by template against the pack it is "
                "based on.",
                ["refusal_by_language"],
                ["packs", "packs_by_language", "packs_by_template", "packs_by_fallacy"],
            )
        )
    if s.turns is not None:
        sections.append(section("turns", "Second turn", TURN_INTRO, TURN_FIGURES, TURN_TABLES))
    if any(n in tables for n in VALIDITY_CHECK_TABLES):
        sections.append(
            section(
                "validity_checks",
                "Validity checks",
                VALIDITY_CHECK_INTRO,
                VALIDITY_CHECK_FIGURES,
                VALIDITY_CHECK_TABLES,
            )
        )
    if "cascade" in tables:  # a pack judged in cascade (docs/cascade.md)
        sections.append(
            section("cascade", "Cascaded judging", cascade_intro(s), [], CASCADE_TABLES)
        )
    if "manifest" in tables:  # what each run really ran (report.manifest_tables)
        sections.append(section("manifest", "Manifest", MANIFEST_INTRO, [], MANIFEST_TABLES))
    if s.empty:
        sections = [x for x in sections if x["id"] in ("counts", "packs", "manifest")]
    return sections


def context(
    s: Summary, views: Sequence[Mapping[str, Any]], tables: Mapping[str, Table]
) -> dict[str, Any]:
    """Everything the two templates show."""
    o = s.options
    return {
        "title": f"DeflectBench report: {pack_title(s.benchmark)}",
        "benchmark_title": pack_title(s.benchmark),
        "meta": s.metadata,
        "empty": s.empty,
        "empty_message": _empty_message(s),
        "notes": list(s.notes),
        "key_numbers": [*_key_numbers(s), *validity_key_numbers(s)] if not s.empty else [],
        "sections": _sections(s, {v["name"]: v for v in views}, tables),
        "example_groups": _example_groups(s),
        "fields": list(FIELDS),
        "field_short": FIELD_SHORT,
        "outcome_labels": OUTCOME_LABELS,
        "consensus": o.consensus,
        "definition": definition(o),
        "n_resamples": o.n_resamples,
        "seed": o.seed,
        "models": list(s.models),
        "judges": list(s.judges),
        "snippet_chars": SNIPPET_CHARS,
        "table_files": [f"tables/{t.name}.csv" for t in tables.values()],
    }


class _CompiledTemplates(FileSystemBytecodeCache):
    """Jinja's cache of compiled templates, so a report does not compile its two templates
    again on every run (~0.07 s CPU, a fifth of the pages' cost): in the folder Jinja makes
    private to the user in the temp folder. A cache that cannot be written is skipped, never an
    error."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_templates(kind: str) -> FileSystemBytecodeCache | None:
    """The cache for ``kind``'s environment, or None when there is no private folder for it.

    Jinja checks a template's source before using its cached code, not the environment's
    settings: the file names carry Jinja's version and a digest of this module (where the
    settings are written), so code compiled under other settings is never read."""
    try:
        setup = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
        pattern = f"__deflectbench_{kind}_{jinja2.__version__}_{setup}_%s.cache"
        return _CompiledTemplates(pattern=pattern)
    except (OSError, RuntimeError):  # no safe private folder: compile every time
        return None


@functools.cache
def _environment(kind: str) -> Environment:
    """Jinja2 for ``html`` (autoescape on: model text is untrusted, nothing is marked safe) or
    ``md`` (every value's ``<`` and ``>`` escaped on output, so text cannot become HTML in a
    Markdown viewer, while apostrophes and quotes stay readable in the raw file). Built once
    per process; compiled templates are kept between runs (:func:`_compiled_templates`)."""
    env = Environment(
        loader=PackageLoader("deflectbench.views.report", "templates"),
        bytecode_cache=_compiled_templates(kind),
        autoescape=kind == "html",
        finalize=None if kind == "html" else _md_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = pct
    env.filters["md_cell"] = _md_cell
    env.filters["md_text"] = _md_text
    env.filters["md_fields"] = _md_fields
    return env


def _md_finalize(value: Any) -> Any:
    if isinstance(value, str):
        # CommonMark backslash escapes: shown as < and >, never read as HTML (an entity would
        # show as a literal "&lt;" in a plain-text viewer)
        return value.replace("<", "\\<").replace(">", "\\>")
    return value


def _md_cell(value: Any) -> str:
    """A Markdown table cell: no pipes or newlines to break the row."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


#: Markdown's markup characters but the backslash, each written with a backslash before it.
_MD_MARKUP = "`*_{}[]()#!|~"


def _md_text(value: Any) -> str:
    """Untrusted text as Markdown that renders as plain text (markup characters escaped): the
    backslash doubled first, then a backslash put before each other markup character (one
    ``replace`` each: a tenth of the cost of a ``translate`` of the text through a dict)."""
    text = str(value).replace("\\", "\\\\")
    for ch in _MD_MARKUP:
        text = text.replace(ch, "\\" + ch)
    return text


def _md_fields(fields: Mapping[str, Any]) -> str:
    """One judge's fields as the page writes them, ``R=1 SR=0 ...`` (``–``: not scored), in
    the fields' order; ``finalize`` escapes the line's ``<`` and ``>`` as it would each part's."""
    return " ".join(f"{FIELD_SHORT[f]}={'–' if fields[f] is None else fields[f]}" for f in FIELDS)


def render_pages(
    s: Summary, views: Sequence[Mapping[str, Any]], tables: Mapping[str, Table]
) -> tuple[str, str]:
    """The HTML page and the Markdown page."""
    ctx = context(s, views, tables)
    html = _environment("html").get_template("report.html.j2").render(**ctx)
    md = _environment("md").get_template("report.md.j2").render(**ctx)
    return html, md
