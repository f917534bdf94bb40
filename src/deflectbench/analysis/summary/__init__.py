"""The typed summary of a store and its JSON: :mod:`.build` computes every table once into a
:class:`~.build.Summary` (``analyze``, ``summarize``) whose fields are :mod:`.fields`'
:class:`~.fields.SummaryFields`; :mod:`.to_json` turns them into the JSON of ``analyze --json``.
The sections it gathers beside the paper's tables are here too: the counts at each step and the
cost (:mod:`.counts`), the packs compared (:mod:`.packs`), turn as a factor (:mod:`.turns`),
example responses (:mod:`.examples`) and the run's metadata (:mod:`.metadata`). Import from the
module that defines a name; this file re-exports nothing."""
