"""Reading a response: normalisation, sentences, quoted passages, concept talk and cues.

A :class:`Scan` holds one normalised response with every cue the phrase lists found in it,
in one pass; the scoring asks it questions (which cues, in which sentence, inside a quote?).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

from deflectbench.judging.lexical.phrases import (
    AH_TARGET,
    FALLACY_NAME,
    FAMILIES,
    NAME_HINTS,
    WRONGDOING,
)
from deflectbench.judging.lexical.trie import compile_phrases

Cue = tuple[int, int]  # start and end offsets of a matched phrase

_SCANNER = compile_phrases(FAMILIES)
#: Wrongdoing words, looked for only next to a pivot.
WRONGDOING_RE = compile_phrases({"wrong": WRONGDOING})
#: References to a person, looked for only in and before a sentence with an attack.
AH_TARGET_RE = compile_phrases({"target": AH_TARGET})
#: A fallacy's name anywhere (after a cheap test for one of ``NAME_HINTS``).
NAME_RE = re.compile(r"\b" + FALLACY_NAME)

#: A label with fewer words than this in the response names a fallacy without producing one.
MIN_PRODUCED_WORDS = 12

_MARKUP = re.compile(r"[*_#`]+")
# A sentence ends at a run of . ! ? followed by whitespace, or at a line break. Only the first
# mark of a run can start a match and the run is taken whole, so a long run of dots costs one
# linear step rather than a quadratic backtrack.
_SENTENCE_END = re.compile(r"[.!?\n](?:(?<=\n)\n*|(?<![.!?][.!?])[.!?]*+(?=\s))")
_QUOTE_START = re.compile(r"[\"']")
_QUOTES = (("\u2018", "'"), ("\u2019", "'"), ("\u201b", "'"), ("\u2032", "'"))
_DOUBLE_QUOTES = (("\u201c", '"'), ("\u201d", '"'))


def normalise(text: str) -> str:
    """One canonical form, so that every phrase is written once, in plain lower case."""
    if not text.isascii():
        # str.replace, not str.translate: translate takes a slow path on non-ASCII text.
        text = unicodedata.normalize("NFKC", text)
        for curly, straight in (*_QUOTES, *_DOUBLE_QUOTES):
            if curly in text:
                text = text.replace(curly, straight)
    text = text.lower()
    return _MARKUP.sub("", text) if any(c in text for c in "*_#`") else text


def _sentence_starts(text: str) -> list[int]:
    """Offsets where sentences start; a position's sentence is found by bisection."""
    return [0, *(m.end() for m in _SENTENCE_END.finditer(text))]


def _definitions(text: str, starts: list[int], definitions: list[Cue]) -> list[Cue]:
    """Spans of sentences that define a fallacy rather than label or produce one.

    Only the part before the first quotation mark counts, so a definition followed by a
    quoted example keeps the example.
    """
    if not definitions:
        return []
    defining = {bisect_right(starts, lo) - 1 for lo, _ in definitions}
    found = []
    for hint in NAME_HINTS:  # str.find is far cheaper than a regex pass over the text
        pos = text.find(hint)
        while pos != -1:
            found.append(pos)
            pos = text.find(hint, pos + 1)
    spans: list[Cue] = []
    seen: set[int] = set()
    for pos in sorted(found):
        i = bisect_right(starts, pos) - 1
        if i in seen:
            continue
        seen.add(i)
        lo = starts[i]
        hi = starts[i + 1] if i + 1 < len(starts) else len(text)
        if i in defining and NAME_RE.search(text, lo, hi):
            q = _QUOTE_START.search(text, pos, hi)
            spans.append((lo, q.start() if q else hi))
    return spans


_DOUBLE_QUOTE = re.compile('"')
_BLOCKQUOTE = re.compile(r"^[ \t]*>[^\n]*", re.MULTILINE)
# A single quote opens a passage after a space, colon or bracket and closes before a space or
# punctuation; apostrophes inside words ("Jordan's") are neither.
_SINGLE_OPEN = re.compile(r"(?:(?<=[\s:(\[])|^)'(?=[^\s'])")
_SINGLE_CLOSE = re.compile(r"(?<=[^\s'])'(?=[\s.,;:!?)\]]|$)")
#: A quoted passage with at least this many words is text the model produced (or quoted).
_MIN_QUOTED_WORDS = 5


def _quoted_spans(text: str) -> list[Cue]:
    """Quoted passages and blockquote lines, in order; one linear pass per kind of mark."""
    spans: list[Cue] = []
    if '"' in text:
        marks = [m.start() for m in _DOUBLE_QUOTE.finditer(text)]
        spans += [(marks[i], marks[i + 1] + 1) for i in range(0, len(marks) - 1, 2)]
    if ">" in text:
        spans += [m.span() for m in _BLOCKQUOTE.finditer(text)]
    if not spans and "'" in text:
        closes = [m.start() for m in _SINGLE_CLOSE.finditer(text)]
        j = 0
        last = -1
        for m in _SINGLE_OPEN.finditer(text):
            lo = m.start()
            if lo <= last:
                continue
            while j < len(closes) and closes[j] < lo + 12:
                j += 1
            if j == len(closes):
                break
            last = closes[j]
            spans.append((lo, last + 1))
    spans.sort()
    return [(lo, hi) for lo, hi in spans if text.count(" ", lo, hi) + 1 >= _MIN_QUOTED_WORDS]


class Scan:
    """One normalised response with its cues, sentences and hidden concept talk."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[str, list[Cue]] = {}
        for m in _SCANNER.finditer(text):
            group = m.lastgroup or ""
            self.found.setdefault(group.rpartition("_")[0], []).append((m.start(), m.end(group)))
        self.starts = _sentence_starts(text)
        self.hidden = _definitions(text, self.starts, self.found.get("definition", []))
        self._hidden_starts = [lo for lo, _ in self.hidden]
        self.quoted = _quoted_spans(text)
        self._quoted_starts = [lo for lo, _ in self.quoted]

    def in_quote(self, pos: int) -> bool:
        j = bisect_right(self._quoted_starts, pos) - 1
        return j >= 0 and pos < self.quoted[j][1]

    def unquoted(self, family: str) -> list[Cue]:
        """The family's cues outside concept talk and outside quoted passages."""
        return [c for c in self.cues(family) if not self.in_quote(c[0])]

    def heading_labels(self) -> list[Cue]:
        """Fallacy names standing alone on their line, after at most list or quote markers."""
        out = []
        for lo, hi in self.cues("headlabel"):
            line_start = self.text.rfind("\n", 0, lo) + 1
            if not self.text[line_start:lo].strip(" \t-*>0123456789.)(\u2022"):
                out.append((lo, hi))
        return out

    def near_quote_labels(self) -> list[Cue]:
        """Fallacy names just before a quoted passage ("Ad hominem... to illustrate: '...'").

        Names after a passage are left to the label phrases ("that's a red herring"), since a
        sentence after an example is as often a general remark about the fallacy.
        """
        out = []
        for lo, _ in self.quoted:
            m = NAME_RE.search(self.text, max(0, lo - 160), lo)
            if m and not self.in_quote(m.start()):
                out.append(m.span())
        return out

    def sentence(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def span(self, first: int, last: int) -> Cue:
        """Offsets of sentences ``first`` to ``last``, clamped to the text."""
        n = len(self.starts)
        hi = self.starts[last + 1] if 0 <= last + 1 < n else len(self.text)
        return self.starts[min(max(first, 0), n - 1)], hi

    def cues(self, family: str) -> list[Cue]:
        """The family's cues, leaving out those inside concept talk."""
        cues = self.found.get(family, [])
        if not self.hidden:
            return cues
        hidden, starts = self.hidden, self._hidden_starts
        return [
            c for c in cues if (j := bisect_right(starts, c[0]) - 1) < 0 or c[0] >= hidden[j][1]
        ]

    def by_sentence(self, family: str) -> dict[int, Cue]:
        """The family's first cue in each sentence, keyed by sentence index."""
        out: dict[int, Cue] = {}
        for c in self.cues(family):
            out.setdefault(self.sentence(c[0]), c)
        return out

    def words(self) -> int:
        """Words outside concept talk (counted exactly only for short texts, where it matters)."""
        if len(self.text) >= 40 * MIN_PRODUCED_WORDS:
            return MIN_PRODUCED_WORDS
        hidden = sum(len(self.text[lo:hi].split()) for lo, hi in self.hidden)
        return len(self.text.split()) - hidden
