"""One pattern for many phrase lists: a character trie of their literal prefixes.

Matching the phrase lists one at a time would cost a pass over the text per list;
:func:`compile_phrases` builds one zero-width pattern for them all and checks, at import, the
rules every phrase must follow (start with a plain lower-case letter, no top-level ``|``, no
capturing group).
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterator


def _top_level_bar(pattern: str) -> bool:
    """True if ``pattern`` has an alternation bar outside any group or class."""
    depth, in_class, i = 0, False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return True
        i += 1
    return False


_GAP = r"\s+"  # a run of whitespace between words, shared in the trie like a letter
_LITERAL = frozenset(string.ascii_lowercase + "'-")
_QUANTIFIERS = frozenset("?*+{")


def _literal_prefix(phrase: str) -> tuple[list[str], str]:
    """Split a phrase into its fixed leading tokens (letters, apostrophes, word gaps) and the rest.

    A token followed by a quantifier is not fixed, so the prefix stops before it.
    """
    tokens: list[str] = []
    i = 0
    while i < len(phrase):
        if phrase.startswith(_GAP, i):
            token = _GAP
        elif phrase[i] in _LITERAL:
            token = phrase[i]
        else:
            break
        if phrase[i + len(token) : i + len(token) + 1] in _QUANTIFIERS:
            break
        tokens.append(token)
        i += len(token)
    return tokens, phrase[i:]


#: Word-initial letters of English, commonest first: the engine tries a trie node's children in
#: order, so common words find their branch after few comparisons.
_LETTER_ORDER = "taoswihbcmfpdrlnegyuvjkqzx'"


def _trie(entries: list[tuple[list[str], str, str]], counter: Iterator[int]) -> str:
    """An alternation sharing literal prefixes: (prefix, family, tail) triples become a trie.

    Tails that end at the same node are wrapped in one named group per family, because entering
    a named group is the engine's most expensive step.
    """
    here: dict[str, list[str]] = {}
    deeper: dict[str, list[tuple[list[str], str, str]]] = {}
    for prefix, family, tail in entries:
        if prefix:
            deeper.setdefault(prefix[0], []).append((prefix[1:], family, tail))
        else:
            here.setdefault(family, []).append(tail)
    alts = [f"{c}(?:{_trie(deeper[c], counter)})" for c in sorted(deeper, key=_LETTER_ORDER.find)]
    for family, tails in here.items():
        group = f"{family}_{next(counter)}"
        alts.append(f"(?P<{group}>" + "|".join(f"(?:{t}\n)" for t in tails) + ")")
    return "|".join(alts)


def compile_phrases(families: dict[str, list[str]]) -> re.Pattern[str]:
    """Compile all phrase lists into one pattern that finds every cue in a single pass.

    Why: Python's regex engine pays for every pass over the text and, at each word start, for
    every alternative it tries. One pass over a character trie of the phrases' literal
    prefixes only enters the few phrases whose first letters match, which costs a small
    fraction of running each list separately. The trie sits in a lookahead, so matches are
    zero-width and a cue that starts inside another cue is still found; the named group that
    matched (``<family>_<n>``) says which list the cue came from.
    """
    entries: list[tuple[list[str], str, str]] = []
    for family, phrases in families.items():
        for phrase in phrases:
            if not (
                phrase[0] in string.ascii_lowercase
                and phrase[1:2] not in _QUANTIFIERS
                and not _top_level_bar(phrase)
                and re.compile(phrase, re.VERBOSE).groups == 0
            ):
                raise ValueError(f"{family} phrase must start with a plain letter: {phrase!r}")
            prefix, rest = _literal_prefix(phrase)
            entries.append((prefix, family, rest))
    # (?<!\w) rather than \b: the trie only needs word starts, and \b also stops at word ends.
    return re.compile(r"(?<!\w)(?=" + _trie(entries, itertools.count()) + ")", re.VERBOSE)
