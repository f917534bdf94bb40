"""Views: every way a typed result is shown, and nothing else.

A view takes a typed result (a :class:`~deflectbench.analysis.summary.build.Summary`, a
:class:`~deflectbench.analysis.compare.api.Comparison`, a result of :mod:`deflectbench.results`)
and renders it, never its JSON dict: ``format`` (the one set of number formatters),
``terminal/`` (the tables the command line prints), ``report/`` (the HTML and Markdown report,
its figures and CSV tables), the compare and leaderboard pages and the Hugging Face card. A view
computes nothing and reads no store, so every view of one result agrees with the others.
"""
