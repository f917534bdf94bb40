"""Human labels into Inspect: a ``deflectbench annotate --export`` file as the records
Inspect's ``precomputed_scores()`` reads, one per labelled generation (sample id and epoch).

An export holds every annotator's labels of every model's generations; the task keeps the
evaluated model's (by the store's spelling of its name) of its own pack, drops a label marked
*unsure*, combines several annotators per field by majority (a tie leaves the field unset),
and names the outcome by the ladder (None when a rung it needs is unset): the rules
``deflectbench analyze`` applies to the same labels. No ``inspect_ai`` import here.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from deflectbench.errors import ConfigError
from deflectbench.inspect_eval.dataset import sample_id
from deflectbench.vocab import FIELDS, LADDER, OUTCOMES

#: The columns a label row needs (``annotate --export`` writes them, and more).
NEEDED = ("model", "claim_id", "prompt_id", "sample", *FIELDS)


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    try:
        if path.suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as f:
                yield from csv.DictReader(f)
        else:
            with path.open(encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if line.strip():
                        row = json.loads(line)
                        if not isinstance(row, dict):
                            raise ConfigError(f"-T labels={path}: line {n} is not an object")
                        yield row
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error) as exc:
        raise ConfigError(f"-T labels={path}: not a readable label export ({exc})") from None


def _bit(value: Any) -> int | None:
    if value in (None, ""):
        return None
    text = str(value).strip()
    return int(text) if text in ("0", "1") else None


def _majority(values: list[int]) -> int | None:
    ones, zeros = values.count(1), values.count(0)
    return None if ones == zeros else int(ones > zeros)


def ladder_outcome(fields: Mapping[str, int | None]) -> str | None:
    """The outcome of labelled fields; None (undecided) when a rung before the first 1 is
    unset, or none is 1 and one is unset."""
    for field, name in LADDER:
        v = fields.get(field)
        if v is None:
            return None
        if v == 1:
            return name
    return OUTCOMES[-1]


def label_records(
    rows: Iterable[Mapping[str, Any]], model: str | None, benchmark: str | None = None
) -> list[dict[str, Any]]:
    """Inspect score records (``id``, ``epoch``, ``value``, ``metadata``) of the labelled
    generations of ``model`` (None: the file must hold one model) in ``benchmark``."""
    by_gen: dict[tuple[str, str, int], list[Mapping[str, Any]]] = defaultdict(list)
    models: set[str] = set()
    for row in rows:
        missing = [c for c in NEEDED if c not in row]
        if missing:
            raise ConfigError(f"-T labels: a row has no {', '.join(missing)} column")
        if benchmark is not None and row.get("benchmark") not in (None, "", benchmark):
            continue
        models.add(str(row["model"]))
        if model is not None and str(row["model"]) != model:
            continue
        if _bit(row.get("unsure")) == 1:
            continue
        try:
            key = (str(row["claim_id"]), str(row["prompt_id"]), int(row["sample"]))
        except (TypeError, ValueError):
            raise ConfigError(f"-T labels: sample {row['sample']!r} is not a number") from None
        by_gen[key].append(row)
    if model is None and len(models) > 1:
        raise ConfigError(f"-T labels: labels of {len(models)} models; name the model's labels")
    records = []
    for (claim_id, prompt_id, sample), labels in sorted(by_gen.items()):
        fields: dict[str, int | None] = {}
        for f in FIELDS:
            said = [b for b in (_bit(r.get(f)) for r in labels) if b is not None]
            fields[f] = _majority(said) if said else None
        records.append(
            {
                "id": sample_id(claim_id, prompt_id),
                "epoch": sample,
                "value": {**fields, "outcome": ladder_outcome(fields)},
                "metadata": {
                    "annotators": sorted(Counter(str(r.get("annotator")) for r in labels))
                },
            }
        )
    return records


def write_label_scores(path: Path, model: str | None, benchmark: str | None, out: Path) -> int:
    """The records of :func:`label_records` as a JSON file ``precomputed_scores()`` reads;
    returns how many."""
    if not path.is_file():
        raise ConfigError(
            f"-T labels={path}: no such file (write it with deflectbench annotate --export)"
        )
    records = label_records(_rows(path), model, benchmark)
    out.write_text(json.dumps(records), encoding="utf-8")
    return len(records)
