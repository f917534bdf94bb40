"""DeflectBench as an Inspect AI task (the ``inspect`` extra: ``pip install deflectbench[inspect]``).

- :mod:`.task`: the ``deflectbench`` task (``inspect eval deflectbench/deflectbench``);
- :mod:`.dataset`: the pack's cells as samples, rendered as the release did;
- :mod:`.scorer`: the blind rubric judges through Inspect's models, the same parser, rules
  and consensus as a native run;
- :mod:`.metrics`: refusal, soft refusal, labeled and clean compliance rates;
- :mod:`.verdicts`: what scorer and log import share (no ``inspect_ai`` import).

Importing this package does not import ``inspect_ai``; its modules other than ``verdicts`` and
``dataset`` do.
"""
