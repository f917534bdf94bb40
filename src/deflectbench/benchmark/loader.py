"""Load and validate a benchmark file, and render its prompts exactly as the release did.

A benchmark file is JSON data (the v1 file is the public release's, verbatim). Validation
happens once, here, so everything downstream can trust ids, counts and placeholders. Any
problem raises :class:`BenchmarkError` with a one-line message naming the bad entry.
"""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from deflectbench.vocab import CONTEXTS, FRAMINGS, LEVEL_NAMES

KNOWN_PLACEHOLDERS = frozenset({"claim", "speaker", "fallacy_def", "all_definitions"})


class BenchmarkError(ValueError):
    """The benchmark file is malformed; the message names the entry."""


@dataclass(frozen=True)
class Claim:
    claim_id: str
    level: int
    level_name: str
    context: str
    domain: str
    text: str


@dataclass(frozen=True)
class Template:
    prompt_id: str
    prompt_num: int
    framing: str
    explicitness: str
    frame: str
    fallacy: str
    template: str


@dataclass(frozen=True)
class Fallacy:
    fallacy_id: str
    name: str
    definition: str


@dataclass(frozen=True)
class Rubric:
    system: str
    user_template: str
    fields: tuple[str, ...]

    def user_prompt(self, claim: str, response: str) -> str:
        """The judge's user message: only the claim and the response, nothing else (blind)."""
        return self.user_template.format(claim=claim, response=response)


@dataclass(frozen=True)
class Cell:
    """One model-free unit of work: a claim under a template, sample ``sample`` (1-based)."""

    claim_id: str
    prompt_id: str
    sample: int


@dataclass(frozen=True)
class Benchmark:
    name: str
    version: str
    sha256: str
    speaker: str
    runs_per_cell: int
    generation_temperature: float
    judge_temperature: float
    claims: tuple[Claim, ...]
    templates: tuple[Template, ...]
    fallacies: tuple[Fallacy, ...]
    all_definitions_format: str
    rubric: Rubric
    models_in_release: tuple[str, ...]

    @property
    def key(self) -> str:
        """Short identity stored with every generation, e.g. ``deflectbench-v1.0``."""
        return f"{self.name.lower()}-v{self.version}"

    def claim(self, claim_id: str) -> Claim:
        return self._claims[claim_id]

    def template(self, prompt_id: str) -> Template:
        return self._templates[prompt_id]

    @cached_property
    def _claims(self) -> dict[str, Claim]:
        return _index(self.claims, "claim_id")

    @cached_property
    def _templates(self) -> dict[str, Template]:
        return _index(self.templates, "prompt_id")

    def render(self, claim_id: str, prompt_id: str) -> str:
        """The exact user message the release sent for this claim and template."""
        claim = self.claim(claim_id)
        template = self.template(prompt_id)
        defs = {f.fallacy_id: f.definition for f in self.fallacies}
        return template.template.format(
            claim=claim.text,
            speaker=self.speaker,
            fallacy_def=defs.get(template.fallacy, ""),
            all_definitions=self.all_definitions_format.format(**defs),
        )

    def prompts(self) -> list[tuple[str, str, str]]:
        """Every (claim_id, prompt_id, prompt), claims outer, templates inner, in file order."""
        return [
            (c.claim_id, t.prompt_id, self.render(c.claim_id, t.prompt_id))
            for c in self.claims
            for t in self.templates
        ]


def _index(items: tuple[Any, ...], attr: str) -> dict[str, Any]:
    return {getattr(x, attr): x for x in items}


def _require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise BenchmarkError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise BenchmarkError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise BenchmarkError(f"{where}: field {key!r} must be {names}, got {value!r}")
    return value


def _placeholders(text: str, where: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as exc:
        raise BenchmarkError(f"{where}: bad template text ({exc})") from None


def parse_benchmark(
    data: Any, *, sha256: str = "", expect_v1_counts: bool | None = None
) -> Benchmark:
    """Validate decoded JSON and build a :class:`Benchmark`."""
    if not isinstance(data, dict):
        raise BenchmarkError("benchmark file: top level must be a JSON object")
    name = _require(data, "name", str, "benchmark")
    version = _require(data, "version", str, "benchmark")
    speaker = _require(data, "fictional_speaker", str, "benchmark")

    fallacies = []
    for i, f in enumerate(_require(data, "fallacies", list, "benchmark")):
        where = f"fallacies[{i}]"
        fallacies.append(
            Fallacy(
                _require(f, "fallacy_id", str, where),
                _require(f, "name", str, where),
                _require(f, "definition", str, where),
            )
        )
    fallacy_ids = [f.fallacy_id for f in fallacies]
    _unique(fallacy_ids, "fallacy_id")
    all_defs = _require(data, "all_definitions_format", str, "benchmark")
    unknown = _placeholders(all_defs, "all_definitions_format") - set(fallacy_ids)
    if unknown:
        raise BenchmarkError(f"all_definitions_format: unknown placeholder {sorted(unknown)[0]!r}")

    claims = []
    for i, c in enumerate(_require(data, "claims", list, "benchmark")):
        where = f"claims[{i}]"
        cid = _require(c, "claim_id", str, where)
        where = f"claim {cid!r}"
        level = _require(c, "level", int, where)
        if level not in LEVEL_NAMES:
            raise BenchmarkError(f"{where}: level must be 1-4, got {level!r}")
        context = _require(c, "context", str, where)
        if context not in CONTEXTS:
            raise BenchmarkError(
                f"{where}: context must be 'us' or 'international', got {context!r}"
            )
        text = _require(c, "text", str, where)
        if not text.strip():
            raise BenchmarkError(f"{where}: empty text")
        claims.append(
            Claim(
                claim_id=cid,
                level=level,
                level_name=c.get("level_name", LEVEL_NAMES[level]),
                context=context,
                domain=_require(c, "domain", str, where),
                text=text,
            )
        )
    _unique([c.claim_id for c in claims], "claim_id")

    allowed_fallacies = set(fallacy_ids) | {"model_choice", "any"}
    templates = []
    for i, t in enumerate(_require(data, "templates", list, "benchmark")):
        where = f"templates[{i}]"
        pid = _require(t, "prompt_id", str, where)
        where = f"template {pid!r}"
        text = _require(t, "template", str, where)
        unknown = _placeholders(text, where) - KNOWN_PLACEHOLDERS
        if unknown:
            raise BenchmarkError(f"{where}: unknown placeholder {{{sorted(unknown)[0]}}}")
        if "{claim}" not in text:
            raise BenchmarkError(f"{where}: the template never shows the claim ({{claim}})")
        framing = _require(t, "framing", str, where)
        if framing not in FRAMINGS:
            raise BenchmarkError(
                f"{where}: framing {framing!r} is not one of {', '.join(FRAMINGS)}"
            )
        fallacy = _require(t, "fallacy", str, where)
        if fallacy not in allowed_fallacies:
            raise BenchmarkError(
                f"{where}: fallacy {fallacy!r} is not one of {sorted(allowed_fallacies)}"
            )
        templates.append(
            Template(
                prompt_id=pid,
                prompt_num=_require(t, "prompt_num", int, where),
                framing=framing,
                explicitness=_require(t, "explicitness", str, where),
                frame=_require(t, "frame", str, where),
                fallacy=fallacy,
                template=text,
            )
        )
    _unique([t.prompt_id for t in templates], "prompt_id")

    judge = _require(data, "judge", dict, "benchmark")
    user_template = _require(judge, "user_template", str, "judge")
    missing = {"claim", "response"} - _placeholders(user_template, "judge.user_template")
    if missing:
        raise BenchmarkError(f"judge.user_template: missing placeholder {{{sorted(missing)[0]}}}")
    rubric = Rubric(
        system=_require(judge, "system", str, "judge"),
        user_template=user_template,
        fields=tuple(_require(judge, "fields", list, "judge")),
    )

    if expect_v1_counts is None:
        expect_v1_counts = version.split(".")[0] == "1"
    if expect_v1_counts:
        if len(claims) != 80:
            raise BenchmarkError(f"benchmark v{version}: expected 80 claims, found {len(claims)}")
        if len(templates) != 15:
            raise BenchmarkError(
                f"benchmark v{version}: expected 15 templates, found {len(templates)}"
            )

    return Benchmark(
        name=name,
        version=version,
        sha256=sha256,
        speaker=speaker,
        runs_per_cell=int(data.get("runs_per_cell", 5)),
        generation_temperature=float(data.get("generation_temperature", 1.0)),
        judge_temperature=float(data.get("judge_temperature", 0.0)),
        claims=tuple(claims),
        templates=tuple(templates),
        fallacies=tuple(fallacies),
        all_definitions_format=all_defs,
        rubric=rubric,
        models_in_release=tuple(data.get("models_in_release", ())),
    )


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for x in ids:
        if x in seen:
            raise BenchmarkError(f"duplicate {what} {x!r}")
        seen.add(x)


def load_benchmark(path: str | Path | None = None) -> Benchmark:
    """Load a benchmark file (default: the bundled v1) and validate it."""
    if path is None:
        raw = (
            resources.files("deflectbench.benchmark")
            .joinpath("data/deflectbench-v1.json")
            .read_bytes()
        )
        where = "bundled deflectbench-v1.json"
    else:
        where = str(path)
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise BenchmarkError(f"{where}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{where}: not valid JSON ({exc})") from None
    try:
        return parse_benchmark(data, sha256=hashlib.sha256(raw).hexdigest())
    except BenchmarkError as exc:
        raise BenchmarkError(f"{where}: {exc}") from None


@cache
def default_benchmark() -> Benchmark:
    """The bundled v1 benchmark, loaded once."""
    return load_benchmark()
