"""The typed results of the commands that gather several rooms (a run's status: the store's
counts, its batches, its manifests). Each is a frozen dataclass with ``to_json()``, the command's
``--json`` output; the views render it and :mod:`deflectbench.api` returns it. A result that one
room computes alone stays in that room (the analysis' ``Summary``, compare's ``Comparison``).
"""
