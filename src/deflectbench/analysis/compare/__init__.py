"""Two results side by side: paired claim-block differences, the flip table, the regression
gate's rules, each side's manifest, the leaderboard.

Modules, bottom up: :mod:`.holm` (Holm's step-down adjustment), :mod:`.paired` (the paired
bootstrap: the same claim draws for both sides), :mod:`.table` (every outcome and field,
overall, per framing and per template; Holm's families), :mod:`.flips` (cells whose majority
outcome changed), :mod:`.thresholds` (``--fail-if`` and ``--require`` rules, and rules not
tested), :mod:`.select` (``STORE[:MODEL[:CONDITION]]`` sides read into scored tables, and which
side pairs with which), :mod:`.coverage` (what each side holds; the common cells a pair is
compared on), :mod:`.manifest` (what the store records of how each side was made, and the judge
check), :mod:`.recorded` (the manifests as typed rows), :mod:`.corrected` (rates corrected for
judge error, compared), :mod:`.board` (the leaderboard and its letter groups), :mod:`.rows` (the
typed rows every view reads), :mod:`.api` (:class:`~.api.Comparison`, the result
``deflectbench.compare`` returns) and :mod:`.leaderboard` (:class:`~.leaderboard.Leaderboard`,
``deflectbench.leaderboard``'s). Like the other subpackages, this file re-exports nothing.
"""
