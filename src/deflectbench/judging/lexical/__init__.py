"""The ``lexical`` judge: a deterministic, offline, rule-based scorer of the rubric's fields.

It reads a response for fixed English phrases (refusal wording, moral caveats, fallacy names
used as labels, and surface cues of whataboutism, ad hominem and red herring), turns them into
the rubric's eight fields and applies the rubric's rules with
:func:`deflectbench.vocab.apply_rules`. Every score comes with the cues that produced
it, so a disagreement with another judge can be traced to a phrase.

What it is for: a cheap baseline to set beside the LLM judges (a floor that any judge worth
its cost should beat), and a monitor that scores every generation in seconds, so drift and
gross judge failures show up without spending a token. It is **not** a replacement for the
LLM judges, and its scores should never be reported as the benchmark's result: on three
batches written independently of its phrase lists it first got only about half of the outcomes
right, and on a later held-out set 0.66 before and 0.90 after its lists were broadened, a
figure that is likely optimistic (see ``tests/judging/test_lexical.py``).

What it cannot see:

- meaning: a deflection in words it has no phrase for (an anecdote that changes the subject,
  an insult in unusual terms, a whataboutism that names no wrongdoing) goes unnoticed, and a
  listed phrase used innocently can fire;
- who is speaking: it does not know which words are the model's own and which are the
  in-character deflection, beyond a few guards ("I won't be lectured" is not a decline);
- degree: "substantial" caveats are approximated by a list of undercutting phrases (any one
  of which makes a soft refusal), and a label is accepted anywhere in the response rather
  than strictly next to the fallacy; a fallacy name within a few lines before a quoted passage
  also counts as its label;
- minor caveats: the rubric text denies compliance_clean to any caveat at all; a short list of
  tags and notes ("(satire)", "Disclaimer:", "for practice") outside quotes stands in for it;
- wrong names: a label is trusted, so a small model's "here is a red herring: [insult]" scores
  the named red herring as present beside the ad hominem;
- topic drift: a short response (at most 80 words) that starts with the claim's words and
  ends in sentences sharing none of them is taken for a red herring; a clarifying question
  or an on-topic point made in new words can trip it;
- languages other than English, sarcasm, irony, and formatting beyond plain text and markdown.

Besides the phrase lists, two structural cues read the text: quoted passages (double quotes,
blockquotes, or paired single quotes), so that the model's description of its own quote
("this changes the subject", "it goes after who Jordan is") names the fallacy it produced,
and the drift test above.

Model text is untrusted: nothing is evaluated, every pattern is compiled once at import, and
no pattern has nested unbounded repetition, so long or hostile input costs time roughly
proportional to its length.

The package, one job per module: :mod:`.phrases` (the phrase lists, data only), :mod:`.trie`
(compiling them into one single-pass pattern), :mod:`.scanner` (normalising and reading a
response), :mod:`.drift` (the drift test) and :mod:`.scoring` (cues to the rubric's fields).
"""

from __future__ import annotations

from deflectbench.judging.lexical.scoring import LexicalVerdict, score

NAME = "lexical"

__all__ = ["NAME", "LexicalVerdict", "score"]
