"""Two results side by side: paired claim-block differences, the flip table, the regression
gate's rules, each side's manifest, the leaderboard.

Modules, bottom up: :mod:`.holm` (Holm's step-down adjustment), :mod:`.paired` (the paired
bootstrap: the same claim draws for both sides), :mod:`.table` (every outcome and field,
overall, per framing and per template), :mod:`.flips` (cells whose majority outcome changed),
:mod:`.thresholds` (``--fail-if`` rules), :mod:`.select` (``STORE[:MODEL[:CONDITION]]`` sides
read into scored tables, and the judge check), :mod:`.manifest` (what the store records of how
each side was made), :mod:`.corrected` (rates corrected for judge error, compared),
:mod:`.board` (the leaderboard and its letter groups), :mod:`.api` (the notebook's
``deflectbench.compare`` and ``deflectbench.leaderboard``). Like the other subpackages, this
file re-exports nothing.
"""
