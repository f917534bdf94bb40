"""The store read into frames: the generation and judgment frames (:mod:`.load` reads a store
once), and from them the scored table (one row per scored generation) and the verdict table
(one row per generation and judge) every other part of the analysis starts from
(:mod:`.scored`). Import from the module that defines a name; this file re-exports nothing."""
