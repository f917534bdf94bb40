"""Two results side by side: paired claim-block differences, the flip table, the leaderboard.

Modules, bottom up: :mod:`.paired` (the paired bootstrap: the same claim draws for both sides),
:mod:`.holm` (Holm's step-down adjustment), :mod:`.table` (every outcome and field, overall,
per framing and per template), :mod:`.flips` (cells whose majority outcome changed),
:mod:`.gate` (``--fail-if`` thresholds), :mod:`.select` (``store:model[:condition]`` sides
read into scored tables), :mod:`.board` (the leaderboard and its groups), :mod:`.api` (the
notebook's :func:`~.api.compare`). Like the other subpackages, this file re-exports nothing.
"""
