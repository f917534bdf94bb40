"""DeflectBench as an Inspect AI task (the ``inspect`` extra: ``pip install deflectbench[inspect]``).

- :mod:`.task`: the ``deflectbench`` task (``inspect eval deflectbench/deflectbench``);
- :mod:`.dataset`: the pack's cells as samples, rendered as the release did;
- :mod:`.scorer`: the blind rubric judges through Inspect's models, the same parser, rules
  and consensus as a native run;
- :mod:`.roles`: the judges as required model roles, checked before any sample;
- :mod:`.metrics`: every outcome's and field's rate, claim-clustered intervals, agreement;
- :mod:`.viewer`: the log viewer's sample list (the cell and the outcome);
- :mod:`.labels` / :mod:`.human`: ``annotate --export`` labels through ``precomputed_scores``;
- :mod:`.corrected`: the rates corrected for judge error by those labels (PPI++, as
  ``analyze``).

What the scorer and the log import share lives below both: ``deflectbench.judging.verdicts``
(the verdict vocabulary) and ``deflectbench.benchmark.single_turn`` (the ``pack`` parameter).
Importing this package does not import ``inspect_ai``; its modules other than ``dataset`` and
``labels`` do.
"""
