"""A stored annotation sample is reused as it is (issue 23, item 10): `annotate
--export-sample` or reopening `annotate` without --sample no longer grows a 30-item sample to
200; only a larger --sample, asked for, grows it."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from support.in_process import run_cli
from support.report_store import claims_per_level, make_store


def cli(*args: str, cwd: Path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    return run_cli(*args, env=env | {"COLUMNS": "200"}, cwd=cwd)


def _rows(path: Path) -> int:
    with path.open(encoding="utf-8", newline="") as fh:
        return len(list(csv.DictReader(fh)))


def _stored(db: Path) -> int:
    with Store.open(db, readonly=True) as store:
        return len(store.annotation_sample())


def test_a_stored_sample_is_reused_as_it_is(tmp_path):
    b = default_benchmark()
    db = make_store(tmp_path / "deflectbench.db", b, claims=claims_per_level(b, 3), hostile=False)
    p = cli("annotate", "--sample", "30", "--export-sample", "a.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert _rows(tmp_path / "a.csv") == 30 == _stored(db)
    p = cli("annotate", "--export-sample", "b.csv", cwd=tmp_path)  # no --sample: as it is
    assert p.returncode == 0, p.stderr
    assert _rows(tmp_path / "b.csv") == 30 == _stored(db)
    assert "new" not in p.stderr
    p = cli("annotate", "--sample", "40", "--export-sample", "c.csv", cwd=tmp_path)  # asked
    assert p.returncode == 0, p.stderr
    assert _rows(tmp_path / "c.csv") == 40 == _stored(db)
    p = cli("annotate", "--sample", "10", "--export-sample", "d.csv", cwd=tmp_path)  # smaller
    assert _rows(tmp_path / "d.csv") == 40 == _stored(db)  # never shrunk
    print("stored sample:", _stored(db))


def test_a_first_sample_without_sample_is_the_default(tmp_path):
    from deflectbench.cli.web import DEFAULT_SAMPLE

    b = default_benchmark()
    db = make_store(tmp_path / "deflectbench.db", b, claims=claims_per_level(b, 3), hostile=False)
    p = cli("annotate", "--export-sample", "a.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    n = _stored(db)
    assert 0 < n <= DEFAULT_SAMPLE and _rows(tmp_path / "a.csv") == n
