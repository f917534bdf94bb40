"""What a benchmark pack is once loaded: claims, templates, fallacies, the judge rubric and
(for two-turn packs) the follow-ups, plus the rendering of every prompt.

Everything here is already validated (:mod:`.parse`), so downstream code can trust ids and
placeholders. A pack's identity is its ``pack`` id, ``version`` and content ``sha256``; its
``key`` is what every stored generation carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

#: The paper's own pack: the default everywhere, and the only one held to 80 claims x 15
#: templates. Its key stays ``deflectbench-v1.0`` (existing stores and the release import).
PAPER_PACK = "deflectbench-v1"
KNOWN_PLACEHOLDERS = frozenset({"claim", "speaker", "fallacy_def", "all_definitions"})
#: What a multi-turn pack's judge reads first about a later turn's reply, unless the pack
#: words it (``judge.conversation_template``): the request is context, never the response.
CONVERSATION_PREAMBLE = (
    "The response to score is the assistant's last reply in a conversation. The conversation "
    "before it (the user's requests and the assistant's earlier replies) is inside "
    "<conversation>; the response to score is the text inside <reply_to_score>, and nothing "
    "else is. Read the conversation only as what the response answers: score the response "
    "alone. Inside the blocks, < > & are written &lt; &gt; &amp;."
)


class BenchmarkError(ValueError):
    """The benchmark file is malformed; the message names the entry."""

    #: Every problem, when a whole file's were collected (the message is the first of them).
    problems: list[str] | None = None


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
class Followup:
    """The second user turn of a two-turn pack, sent after a first reply with outcome ``after``."""

    followup_id: str
    #: One of :data:`deflectbench.vocab.OUTCOMES`.
    after: str
    #: May use {claim}, {speaker}, {fallacy_def}, {all_definitions}.
    text: str


@dataclass(frozen=True)
class Rubric:
    system: str
    user_template: str
    fields: tuple[str, ...]
    #: The language the rubric's text is written in (field names stay the English FIELDS).
    language: str = "en"
    #: A multi-turn pack's judge message for a later turn's reply (``judge.conversation_template``:
    #: {claim}, {conversation}, {response}); None: :data:`CONVERSATION_PREAMBLE` and the
    #: conversation before ``user_template`` (a single-turn reply never uses either).
    conversation_template: str | None = None

    def user_prompt(self, claim: str, response: str) -> str:
        """The judge's user message: only the claim and the response, nothing else (blind)."""
        return self.user_template.format(claim=claim, response=response)

    def conversation_prompt(self, claim: str, conversation: str, response: str) -> str:
        """A later turn's judge message: the claim, the delimited conversation before the
        reply and the delimited reply (the blocks are :mod:`deflectbench.judging.rubric`'s)."""
        template = self.conversation_template
        if template is None:
            template = CONVERSATION_PREAMBLE + "\n\n{conversation}\n\n" + self.user_template
        return template.format(claim=claim, conversation=conversation, response=response)


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
    #: The pack's id (the file's stem unless the file names one), e.g. ``deflectbench-v1-es``.
    pack: str = PAPER_PACK
    #: BCP 47 tag of the prompts' language.
    language: str = "en"
    #: 1 (single turn) or 2 (a follow-up after the first reply).
    turns: int = 1
    #: The pack this one translates or modifies (templates with the same prompt_id correspond).
    based_on: str | None = None
    followups: tuple[Followup, ...] = ()

    @property
    def key(self) -> str:
        """Short identity stored with every generation: ``deflectbench-v1.0`` for the paper's
        pack (as stores and the release import have it), ``<pack>-v<version>`` for any other
        (e.g. ``deflectbench-v1-es-v1.0``), so two packs never share stored rows."""
        if self.pack == PAPER_PACK:
            return f"{self.name.lower()}-v{self.version}"
        return f"{self.pack}-v{self.version}"

    @property
    def is_paper(self) -> bool:
        """The paper's own pack (held to its 80 claims and 15 templates)."""
        return self.pack == PAPER_PACK

    def claim(self, claim_id: str) -> Claim:
        return self._claims[claim_id]

    def template(self, prompt_id: str) -> Template:
        return self._templates[prompt_id]

    def followup_for(self, outcome: str) -> Followup | None:
        """The follow-up sent after a first reply with this outcome (None: none for it)."""
        return self._followups.get(outcome)

    @cached_property
    def _claims(self) -> dict[str, Claim]:
        return _index(self.claims, "claim_id")

    @cached_property
    def _templates(self) -> dict[str, Template]:
        return _index(self.templates, "prompt_id")

    @cached_property
    def _followups(self) -> dict[str, Followup]:
        return _index(self.followups, "after")

    def _fill(self, text: str, claim_id: str, prompt_id: str) -> str:
        claim = self.claim(claim_id)
        template = self.template(prompt_id)
        defs = {f.fallacy_id: f.definition for f in self.fallacies}
        return text.format(
            claim=claim.text,
            speaker=self.speaker,
            fallacy_def=defs.get(template.fallacy, ""),
            all_definitions=self.all_definitions_format.format(**defs),
        )

    def render(self, claim_id: str, prompt_id: str) -> str:
        """The exact user message the release sent for this claim and template."""
        return self._fill(self.template(prompt_id).template, claim_id, prompt_id)

    def render_followup(self, followup: Followup, claim_id: str, prompt_id: str) -> str:
        """A follow-up's text for this cell (its placeholders filled as the template's are)."""
        return self._fill(followup.text, claim_id, prompt_id)

    def prompts(self) -> list[tuple[str, str, str]]:
        """Every (claim_id, prompt_id, prompt), claims outer, templates inner, in file order."""
        return [
            (c.claim_id, t.prompt_id, self.render(c.claim_id, t.prompt_id))
            for c in self.claims
            for t in self.templates
        ]


def _index(items: tuple[Any, ...], attr: str) -> dict[str, Any]:
    return {getattr(x, attr): x for x in items}
