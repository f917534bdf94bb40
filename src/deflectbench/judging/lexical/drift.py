"""The drift test: a short response that starts on the claim's topic and ends elsewhere.

A short response that leaves the claim's topic for good (weak models' "Mount Everest is very
tall. Also, I like pizza...") introduces an irrelevant topic, which is a red herring. Words of
the claim are compared after dropping common words (``phrases.STOPWORDS``) and a plural "s".
"""

from __future__ import annotations

import re

from deflectbench.judging.lexical.phrases import META_WORDS, STOPWORDS
from deflectbench.judging.lexical.scanner import Cue

_WORD = re.compile(r"[a-z0-9]+")
#: Drift is only judged on responses this short; longer ones change topic for many reasons.
_MAX_DRIFT_WORDS = 80


def _content_words(text: str) -> set[str]:
    """The words that carry a topic, with a plural "s" dropped so "claims" meets "claim"."""
    words = set()
    for w in _WORD.findall(text):
        if len(w) < 3 or w in STOPWORDS:
            continue
        words.add(w[:-1] if len(w) > 4 and w.endswith("s") else w)
    return words


def drifts(claim: str, text: str, starts: list[int]) -> Cue | None:
    """The drifting tail of a short response that starts on the claim's topic and leaves it."""
    if len(text) > 12 * _MAX_DRIFT_WORDS or len(text.split()) > _MAX_DRIFT_WORDS:
        return None
    topic = _content_words(claim) - META_WORDS
    if not topic:
        return None
    bounds = [*starts, len(text)]
    sentences = [
        (bounds[i], bounds[i + 1])
        for i in range(len(starts))
        if text[bounds[i] : bounds[i + 1]].strip()
    ]
    on_topic = [
        i
        for i, (lo, hi) in enumerate(sentences)
        if _content_words(text[lo:hi]) & (topic | META_WORDS)
    ]
    if not on_topic or on_topic[0] != 0:
        return None
    tail = sentences[on_topic[-1] + 1 :]
    tail_words = sum(len(text[lo:hi].split()) for lo, hi in tail)
    if tail_words < 10 or (len(tail) < 2 and tail_words < 12):
        return None
    return tail[0][0], tail[-1][1]
