"""What ``deflectbench spec`` shows of a benchmark pack, typed: the pack at a glance, its ids to
browse (claims, templates, framings, fallacies), every rendered prompt; and the shipped packs
(``spec --list``). ``to_json()`` is the command's ``--json``; the listings are also DataFrames."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.benchmark.definition import Claim, Fallacy, Template
from deflectbench.vocab import FRAMINGS

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.benchmark import Benchmark, PackInfo

__all__ = [
    "LISTINGS",
    "ClaimRow",
    "FallacyRow",
    "FramingRow",
    "Mutated",
    "Packs",
    "Spec",
    "TemplateRow",
]

#: The listings, in the order they print when several are asked for.
LISTINGS: tuple[str, ...] = ("claims", "templates", "framings", "fallacies")


@dataclass(frozen=True)
class ClaimRow(Claim):
    """A claim: id, controversy level (number and name), context, domain, text (the pack's
    :class:`~deflectbench.benchmark.definition.Claim`, its fields in this order)."""


@dataclass(frozen=True)
class TemplateRow:
    """A template with its text (placeholders such as ``{claim}`` kept)."""

    prompt_id: str
    prompt_num: int
    framing: str
    fallacy: str
    explicitness: str
    frame: str
    template: str


@dataclass(frozen=True)
class FramingRow:
    """A framing with the templates that use it (the pack's own; each shown by its id,
    requested fallacy and text)."""

    framing: str
    explicitness: tuple[str, ...]
    templates: tuple[Template, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "framing": self.framing,
            "explicitness": list(self.explicitness),
            "templates": [
                {"prompt_id": t.prompt_id, "fallacy": t.fallacy, "template": t.template}
                for t in self.templates
            ],
        }


@dataclass(frozen=True)
class FallacyRow(Fallacy):
    """A fallacy, its definition as the prompts quote it, and the templates asking for it."""

    templates: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"templates": list(self.templates)}


Row = ClaimRow | TemplateRow | FramingRow | FallacyRow


def _row_json(row: Row) -> dict[str, Any]:
    return row.to_json() if isinstance(row, FramingRow | FallacyRow) else asdict(row)


@dataclass(frozen=True)
class Spec:
    """A benchmark pack as ``spec`` shows it: the pack, its overview and its listings."""

    benchmark: Benchmark
    #: The overview (``spec --json``): counts, claims by level and context, by domain,
    #: templates by framing and by fallacy.
    overview: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_claims(self) -> int:
        return len(self.benchmark.claims)

    @property
    def n_templates(self) -> int:
        return len(self.benchmark.templates)

    @property
    def n_prompts(self) -> int:
        return self.n_claims * self.n_templates

    @property
    def claims_by_level_context(self) -> Mapping[str, Mapping[str, int]]:
        """``"1 settled_science"`` -> context -> claims."""
        by_level: Mapping[str, Mapping[str, int]] = self.overview["claims_by_level_context"]
        return by_level

    @property
    def claims_by_domain(self) -> Mapping[str, int]:
        by_domain: Mapping[str, int] = self.overview["claims_by_domain"]
        return by_domain

    @property
    def templates_by_framing(self) -> Mapping[str, tuple[Template, ...]]:
        """Each framing (in file order) with its templates."""
        out: dict[str, list[Template]] = {}
        for t in self.benchmark.templates:
            out.setdefault(t.framing, []).append(t)
        return {k: tuple(v) for k, v in out.items()}

    @property
    def claims(self) -> tuple[ClaimRow, ...]:
        """Every claim in file order."""
        return tuple(
            ClaimRow(c.claim_id, c.level, c.level_name, c.context, c.domain, c.text)
            for c in self.benchmark.claims
        )

    @property
    def templates(self) -> tuple[TemplateRow, ...]:
        """Every template in file order."""
        return tuple(
            TemplateRow(
                t.prompt_id, t.prompt_num, t.framing, t.fallacy, t.explicitness, t.frame, t.template
            )
            for t in self.benchmark.templates
        )

    @property
    def framings(self) -> tuple[FramingRow, ...]:
        """Each framing in the paper's order (then any other, alphabetically)."""
        b = self.benchmark
        present = {t.framing for t in b.templates}
        order = [f for f in FRAMINGS if f in present] + sorted(present - set(FRAMINGS))
        out = []
        for framing in order:
            members = [t for t in b.templates if t.framing == framing]
            out.append(
                FramingRow(
                    framing,
                    tuple(sorted({t.explicitness for t in members})),
                    tuple(members),
                )
            )
        return tuple(out)

    @property
    def fallacies(self) -> tuple[FallacyRow, ...]:
        """Each fallacy; ``model_choice`` and ``any`` templates leave the choice to the model."""
        b = self.benchmark
        return tuple(
            FallacyRow(
                f.fallacy_id,
                f.name,
                f.definition,
                tuple(t.prompt_id for t in b.templates if t.fallacy == f.fallacy_id),
            )
            for f in b.fallacies
        )

    def listing(self, name: str) -> tuple[Row, ...]:
        """One listing by name (:data:`LISTINGS`)."""
        rows: tuple[Row, ...] = getattr(self, name)
        return rows

    def listings_json(self, names: Sequence[str]) -> Any:
        """``spec --claims ... --json``: the listing's array, or with several an object keyed by
        listing."""
        data = {name: [_row_json(r) for r in self.listing(name)] for name in names}
        return data[names[0]] if len(names) == 1 else data

    def table(self, name: str) -> pd.DataFrame:
        """One listing as a DataFrame, a row per item."""
        import pandas as pd

        return pd.DataFrame([_row_json(r) for r in self.listing(name)])

    def prompts(self) -> list[dict[str, str]]:
        """Every rendered prompt (``spec --prompts``): claims outer, templates inner."""
        return [
            {"claim_id": c, "prompt_id": p, "prompt": text}
            for c, p, text in self.benchmark.prompts()
        ]

    def to_json(self) -> dict[str, Any]:
        """``spec --json``: the pack at a glance."""
        return dict(self.overview)


@dataclass(frozen=True)
class Packs:
    """The shipped packs (``spec --list``); a broken one has its problem."""

    infos: tuple[PackInfo, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [asdict(i) for i in self.infos]


@dataclass(frozen=True)
class Mutated:
    """A pack of prompt variants written by ``deflectbench mutate``: where, its id, its size."""

    path: Path
    pack: str
    templates: int
