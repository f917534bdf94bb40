"""Required literals of a phrase: strings one of which every match of the phrase contains.

The monitor's pre-filter (:mod:`.monitor`) uses them to clear, with a few substring tests, text
in which no phrase can match, instead of a regex pass that costs as much as the full scan (the
engine tries the phrase trie at every word start). It must never clear text a phrase matches,
so the rules are conservative:

- the text is compared with each run of non-word characters as one space (``words``), so a
  ``\\s+`` in a phrase is a literal space, literal runs may span it, a phrase's start (a word
  start) and a ``\\b`` after a letter are a space too, and the literals are mapped alike;
- literal runs (``LITERAL`` characters, zero-width assertions skipped) are joined across a
  group that is a choice of literal starts ("i can" from ``i\\s+(?:can|won)``), up to a cap;
- anything optional, repeated from zero, or a character class ends a run; a group repeated at
  least once or a choice of alternatives each with their own required literals also counts;
- of all the candidate sets, the one whose shortest string is longest is kept; a phrase with
  no candidate makes :func:`required_literals` return None (no pre-filter possible).

Soundness is checked in ``tests/judging/test_monitor.py`` against the real phrase lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the stubs type re's parser under its old public names (deprecated to import)
    import sre_constants as C
    import sre_parse as P
else:
    from re import _constants as C
    from re import _parser as P

from deflectbench.judging.lexical.phrases import STOPWORDS

__all__ = ["LiteralFilter", "required_literals", "words"]

#: How many alternative strings a joined run may grow to before it is cut.
_MAX_JOINED = 32
#: Shorter candidates are useless as filters (they occur in almost any text).
_MIN_LENGTH = 3
_WORD = re.compile(r"\w+")
#: Words too common to make a literal worth testing for.
COMMON = STOPWORDS | {"not", "can", "will", "would", "could", "should", "don", "t", "s", "m"}


_NON_WORD = re.compile(r"\W+")


#: ASCII non-word characters to spaces (str.translate is far cheaper than a regex pass).
_ASCII_NON_WORD = {i: " " for i in range(128) if not re.match(r"\w", chr(i))}


def _tokens(text: str) -> list[str]:
    if text.isascii():
        return text.translate(_ASCII_NON_WORD).split()
    return _NON_WORD.sub(" ", text).split()


def words(text: str) -> str:
    """``text`` with every run of non-word characters (spaces, punctuation, apostrophes) as
    one space: what the literals are looked for in (pad it with a space on both sides)."""
    return " ".join(_tokens(text))


def _is_space(item: tuple[object, object]) -> bool:
    op, av = item
    if op is C.IN:
        return av == [(C.CATEGORY, C.CATEGORY_SPACE)]
    return op is C.LITERAL and isinstance(av, int) and chr(av).isspace()


class _Best:
    """The best candidate set seen: its shortest string is the longest, then it is smallest."""

    def __init__(self) -> None:
        self.cands: frozenset[str] | None = None

    @staticmethod
    def _score(cands: frozenset[str]) -> tuple[int, int, int, int]:
        """Best first: a long uncommon whole word in every string (so :class:`LiteralFilter`
        finds it through the text's word set), then the characters outside common words, then
        length, then fewer strings."""
        whole = min(
            max((len(w) for w in s.split(" ")[1:-1] if w not in COMMON), default=0) for s in cands
        )
        rare = min(sum(len(w) for w in _WORD.findall(s) if w not in COMMON) for s in cands)
        return whole, rare, min(len(s) for s in cands), -len(cands)

    def consider(self, cands: Iterable[str] | None) -> None:
        if not cands:
            return
        got = frozenset(cands)
        if "" in got or min(len(s) for s in got) < _MIN_LENGTH:
            return
        if self.cands is None or self._score(got) > self._score(self.cands):
            self.cands = got


def _starts(alt: list) -> tuple[frozenset[str], bool]:
    """The literal strings an alternative starts with (up to its first non-literal item), and
    whether it is nothing else."""
    prefix = ""
    for item in alt:
        op, av = item
        if op is C.LITERAL or _is_space(item):
            prefix += " " if _is_space(item) else chr(av)
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        elif (
            op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
            and av[0] >= 1
            and len(av[2]) == 1
            and _is_space(av[2][0])
        ):
            prefix += " "
        elif op is C.SUBPATTERN:
            inner, done = _starts(av[-1])
            if len(inner) != 1:
                return frozenset({prefix}) if prefix else frozenset(), False
            prefix += next(iter(inner))
            if not done:
                return frozenset({prefix}), False
        else:
            return (frozenset({prefix}) if prefix else frozenset()), False
    return frozenset({prefix}), True


def _walk(items: list, cur: set[str], best: _Best) -> bool:
    """Walk a sequence, growing the literal strings ending here (``cur``, in place) and
    recording candidates in ``best``. True if the sequence was literal all the way."""
    literal = True
    for item in items:
        op, av = item
        if op is C.LITERAL or _is_space(item):
            ch = " " if _is_space(item) else chr(av)
            cur_new = {s + ch for s in cur}
            cur.clear()
            cur.update(cur_new)
            continue
        if op is C.AT and av is C.AT_BOUNDARY and all(x[-1:].isalnum() for x in cur):
            cur_new = {x + " " for x in cur}  # a word ends here: a space once words are split
            cur.clear()
            cur.update(cur_new)
            continue
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):  # zero-width: the run goes on
            continue
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, _hi, sub = av
            if lo >= 1 and len(sub) == 1 and _is_space(sub[0]):
                cur_new = {s + " " for s in cur}  # \s+ is one space once collapsed
                cur.clear()
                cur.update(cur_new)
                continue
            best.consider(cur)
            cur.clear()
            cur.add("")
            literal = False
            if lo >= 1:
                inner = _Best()
                _flush_walk(sub, inner)
                best.consider(inner.cands)
            continue
        if op is C.SUBPATTERN:
            if not _walk(av[-1], cur, best):
                literal = False
            continue
        if op is C.BRANCH:
            alts = av[1]
            starts = [_starts(a) for a in alts]
            size = len(cur) * sum(len(s) for s, _ in starts)
            if all(s and "" not in s for s, _ in starts) and size <= _MAX_JOINED:
                joined = {p + t for p in cur for s, _ in starts for t in s}
                cur.clear()
                cur.update(joined)
                if all(done for _, done in starts):
                    continue
            # the alternatives' own requirements, if each has one
            each = []
            for a in alts:
                inner = _Best()
                _flush_walk(a, inner)
                each.append(inner.cands)
            best.consider(cur)
            required = [c for c in each if c]
            if len(required) == len(each):
                best.consider({s for c in required for s in c})
            cur.clear()
            cur.add("")
            literal = False
            continue
        # a class, a wildcard, a negated literal, a back-reference: the run ends
        best.consider(cur)
        cur.clear()
        cur.add("")
        literal = False
    return literal


def _flush_walk(items: list, best: _Best, start: str = "") -> None:
    cur = {start}
    _walk(items, cur, best)
    best.consider(cur)


def required_literals(phrases: Iterable[str], flags: int = re.VERBOSE) -> frozenset[str] | None:
    """Strings one of which every match of any of ``phrases`` contains (in collapsed text),
    with strings that contain another one dropped; None if some phrase has none."""
    found: set[str] = set()
    for phrase in phrases:
        best = _Best()
        # a phrase starts at a word start (the scanner's (?<!\w)): a space in ``words(text)``
        _flush_walk(list(P.parse(phrase, flags).data), best, start=" ")
        if best.cands is None:
            return None
        found |= {_NON_WORD.sub(" ", c) for c in best.cands}  # as words() maps text
    found.discard(" ")
    return frozenset(s for s in found if not any(o != s and o in s for o in found))


class LiteralFilter:
    """A fast test that text holds none of a set of required literals.

    Each literal with a whole word inside it (between two spaces) is filed under its longest
    such word: a text whose words do not include it cannot hold the literal, and a set
    intersection finds the few worth a substring test. Literals with no whole word are always
    tested.
    """

    def __init__(self, literals: Iterable[str]) -> None:
        self.by_word: dict[str, list[str]] = {}
        self.always: list[str] = []
        for lit in sorted(literals):
            inner = lit.split(" ")[1:-1]  # the words with a space on both sides
            if inner:
                self.by_word.setdefault(max(inner, key=len), []).append(lit)
            else:
                self.always.append(lit)
        self.keys = frozenset(self.by_word)

    def might_match(self, text: str) -> bool:
        """False only when no literal occurs in ``text`` (already normalised)."""
        tokens = _tokens(text)
        padded = f" {' '.join(tokens)} "
        if any(lit in padded for lit in self.always):
            return True
        hits = self.keys.intersection(tokens)
        return any(lit in padded for w in hits for lit in self.by_word[w])
