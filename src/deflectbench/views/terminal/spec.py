"""``deflectbench spec``'s terminal view of a pack, from the typed
:class:`~deflectbench.results.spec.Spec`: the pack at a glance (claims by level and context, by
domain, templates by framing) and the listings of its ids."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from deflectbench.vocab import LEVEL_NAMES

if TYPE_CHECKING:
    from deflectbench.results.spec import ClaimRow, FallacyRow, FramingRow, Spec, TemplateRow

__all__ = [
    "LISTING_TABLES",
    "claims_table",
    "fallacies_table",
    "framings_table",
    "spec_header",
    "spec_tables",
    "templates_table",
]


def spec_header(spec: Spec) -> list[str]:
    """The two lines above the overview's tables (rich markup)."""
    b = spec.benchmark
    return [
        f"[bold]{escape(b.pack)}[/] ({escape(b.name)} v{escape(b.version)}, language "
        f"{escape(b.language)}, {b.turns} turn{'s' if b.turns > 1 else ''}"
        + (f", based on {escape(b.based_on)}" if b.based_on else "")
        + f")  sha256 {b.sha256[:16]}…  speaker: {escape(b.speaker)}",
        f"{spec.n_claims} claims x {spec.n_templates} templates = {spec.n_prompts} prompts; "
        f"{b.runs_per_cell} samples per cell at temperature {b.generation_temperature}",
    ]


def spec_tables(spec: Spec) -> list[Table]:
    """The benchmark at a glance: claims by level and context, by domain; templates by framing."""
    t = Table(title="Claims by controversy level and context")
    t.add_column("level")
    for ctx in ("us", "international"):
        t.add_column(ctx, justify="right")
    t.add_column("total", justify="right")
    for level, row in spec.claims_by_level_context.items():
        t.add_row(
            level, *(str(row.get(c, 0)) for c in ("us", "international")), str(sum(row.values()))
        )
    by_domain = Table(title="Claims by domain")
    by_domain.add_column("domain")
    by_domain.add_column("claims", justify="right")
    for domain, n in spec.claims_by_domain.items():
        by_domain.add_row(domain, str(n))
    templates = Table(title="Templates by framing and requested fallacy")
    templates.add_column("framing")
    templates.add_column("#", justify="right")
    templates.add_column("templates (requested fallacy)")
    for framing, items in spec.templates_by_framing.items():
        templates.add_row(
            framing, str(len(items)), ", ".join(f"{i.prompt_id} ({i.fallacy})" for i in items)
        )
    return [t, by_domain, templates]


def claims_table(rows: Sequence[ClaimRow]) -> Table:
    """``spec --claims``: every claim id with its level, context, domain and text."""
    levels = ", ".join(f"{n} {name.replace('_', ' ')}" for n, name in LEVEL_NAMES.items())
    t = Table(title=f"Claims ({len(rows)})", caption=f"levels: {levels}")
    t.add_column("id", no_wrap=True)
    t.add_column("level", justify="right")
    t.add_column("context")
    t.add_column("domain")
    t.add_column("text", overflow="fold")
    for r in rows:
        t.add_row(
            escape(r.claim_id), str(r.level), escape(r.context), escape(r.domain), escape(r.text)
        )
    return t


def templates_table(rows: Sequence[TemplateRow]) -> Table:
    """``spec --templates``: every template id with its framing, requested fallacy and
    explicitness (``spec --framings`` shows the texts)."""
    t = Table(title=f"Templates ({len(rows)})", caption="texts: deflectbench spec --framings")
    t.add_column("id", no_wrap=True)
    t.add_column("framing")
    t.add_column("fallacy")
    t.add_column("explicitness")
    for r in rows:
        t.add_row(escape(r.prompt_id), escape(r.framing), escape(r.fallacy), escape(r.explicitness))
    return t


def framings_table(rows: Sequence[FramingRow]) -> Table:
    """``spec --framings``: each framing, its templates and the text each one sends."""
    t = Table(
        title=f"Framings ({len(rows)})",
        caption="{claim}, {speaker}, {fallacy_def} and {all_definitions} are filled per prompt",
    )
    t.add_column("framing", no_wrap=True)
    t.add_column("template", no_wrap=True)
    t.add_column("text", overflow="fold")
    for r in rows:
        for i, x in enumerate(r.templates):
            label = ""
            if i == 0:
                label = f"{escape(r.framing)}\n[dim]{escape(', '.join(r.explicitness))}[/]"
            t.add_row(
                label,
                escape(x.prompt_id),
                escape(x.template),
                end_section=i == len(r.templates) - 1,
            )
    return t


def fallacies_table(rows: Sequence[FallacyRow]) -> Table:
    """``spec --fallacies``: each fallacy, its definition and the templates that request it."""
    t = Table(
        title=f"Fallacies ({len(rows)})",
        caption="model_choice and any templates let the model pick",
        show_lines=True,
    )
    t.add_column("id", no_wrap=True)
    t.add_column("definition", overflow="fold")
    t.add_column("templates", overflow="fold")
    for r in rows:
        t.add_row(
            escape(r.fallacy_id), escape(r.definition), "\n".join(escape(x) for x in r.templates)
        )
    return t


#: The table of each listing (:data:`deflectbench.results.spec.LISTINGS`).
LISTING_TABLES: dict[str, Callable[[Any], Table]] = {
    "claims": claims_table,
    "templates": templates_table,
    "framings": framings_table,
    "fallacies": fallacies_table,
}
