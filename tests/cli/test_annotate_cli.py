"""Human labels in and out through the CLI: the blind sample for annotators elsewhere, filled
in and imported back; labels exported and imported into another store by the generation's
portable key; bad files refused whole with file:line; `view` and `annotate` served for real."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.interop import InteropError
from deflectbench.interop.labels import (
    BLIND_COLUMNS,
    LABEL_COLUMNS,
    export_labels,
    import_labels,
)
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS
from support.in_process import run_cli
from support.report_store import make_store

B = default_benchmark()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env.update(COLUMNS="200")
    return run_cli(*args, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("cli") / "deflectbench.db", B)


@pytest.fixture
def work(base, tmp_path) -> Path:
    (tmp_path / "deflectbench.db").write_bytes(base.read_bytes())
    return tmp_path


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_blind_sample_round_trip(work):
    p = cli("annotate", "--sample", "20", "--export-sample", "sample.csv", cwd=work)
    assert p.returncode == 0, p.stderr
    assert "20 items: sample.csv" in p.stdout and "strata" in p.stderr
    rows = _read_csv(work / "sample.csv")
    assert list(rows[0]) == list(BLIND_COLUMNS) and len(rows) == 20
    text = (work / "sample.csv").read_text()
    for secret in ("acme", "explicit_", "judge-", "direct", "coach"):
        assert secret not in text  # nothing says which model, template or framing
    # an annotator elsewhere fills in five rows (yes/no words are fine), leaves the rest empty
    for row in rows[:5]:
        row.update(dict.fromkeys(FIELDS, "no"), refusal="yes", note="=HYPERLINK(1)")
    rows[4]["unsure"] = "1"
    with (work / "filled.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(BLIND_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    p = cli("annotate", "--import", "filled.csv", "--annotator", "crowd", cwd=work)
    assert p.returncode == 0, p.stderr
    assert "imported 5 labels (crowd: 5)" in p.stdout
    with Store.open(work / "deflectbench.db", readonly=True) as store:
        labels = store.labels("crowd")
        sample = {i.item_id: i.gen_id for i in store.annotation_sample()}
    assert {lab.gen_id for lab in labels} == {sample[r["item_id"]] for r in rows[:5]}
    assert all(lab.values["refusal"] == 1 and lab.values["WA_present"] == 0 for lab in labels)
    assert sum(lab.unsure for lab in labels) == 1
    assert all(lab.source == "import:filled.csv" for lab in labels)
    # the same sample again: reused, not redrawn
    p = cli("annotate", "--sample", "20", "--export-sample", "again.csv", cwd=work)
    assert [r["item_id"] for r in _read_csv(work / "again.csv")] == [r["item_id"] for r in rows]
    # exported labels neutralise spreadsheet formulas
    p = cli("annotate", "--export", "labels.csv", cwd=work)
    assert p.returncode == 0 and "5 labels: labels.csv" in p.stdout
    exported = _read_csv(work / "labels.csv")
    assert list(exported[0]) == list(LABEL_COLUMNS)
    assert all(r["note"] == "'=HYPERLINK(1)" for r in exported)


def test_labels_move_between_stores_by_portable_key(work, tmp_path_factory, base):
    with Store.open(work / "deflectbench.db") as store:
        store.save_label(HumanLabel(3, "alice", {"refusal": 1}, unsure=True, note="n"))
        store.save_label(HumanLabel(5, "bob", dict.fromkeys(FIELDS, 0)))
        assert export_labels(store, work / "out.jsonl") == 2
        before = store.labels()
    lines = [json.loads(x) for x in (work / "out.jsonl").read_text().splitlines()]
    assert [x["annotator"] for x in lines] == ["alice", "bob"]
    assert lines[0]["model"] == "acme/alpha-1" and lines[0]["item_id"] is None
    for x in lines:  # another store: no sample there, and no condition given
        x.pop("item_id")
        x.pop("condition")
    other = tmp_path_factory.mktemp("other") / "o.db"
    other.write_bytes(base.read_bytes())
    (work / "in.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with Store.open(other) as store:
        done = import_labels(store, work / "in.jsonl")
        after = store.labels()
    assert done.labels == 2 and done.annotators == {"alice": 1, "bob": 1}
    strip = [(x.gen_id, x.annotator, x.values, x.unsure, x.note, x.created_at) for x in before]
    assert [
        (x.gen_id, x.annotator, x.values, x.unsure, x.note, x.created_at) for x in after
    ] == strip


def test_a_bad_file_is_refused_whole(work):
    good = {"benchmark": B.key, "model": "acme/alpha-1", "claim_id": "L1_INT_01"}
    rows = [
        good | {"prompt_id": "explicit_direct_WA", "sample": 1, "annotator": "a", "refusal": 1},
        good | {"prompt_id": "explicit_direct_WA", "sample": 2, "annotator": "a", "refusal": 7},
        good | {"prompt_id": "nope", "sample": 1, "annotator": "a", "refusal": 1},
        {"item_id": "zzz", "annotator": "a", "refusal": 1},
        good | {"prompt_id": "explicit_direct_WA", "sample": 1, "annotator": "", "refusal": 1},
        good | {"prompt_id": "explicit_direct_WA", "sample": 1, "annotator": "a", "refusal": 0},
    ]
    (work / "bad.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    p = cli("annotate", "--import", "bad.jsonl", cwd=work)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    err = " ".join(p.stderr.split())
    assert "nothing imported, 5 bad row(s)" in err
    for where, what in (
        (2, "refusal is 7"),
        (3, "no generation"),
        (4, "item_id 'zzz'"),
        (5, "no annotator: fill the annotator column or pass --annotator NAME"),
        (6, "a second label by a"),
    ):
        assert f"bad.jsonl:{where}: {what}" in err, (where, err)
    with Store.open(work / "deflectbench.db", readonly=True) as store:
        assert store.labels() == []
    with Store.open(work / "deflectbench.db") as store:
        with pytest.raises(InteropError, match=r"give a \.csv or \.jsonl"):
            import_labels(store, work / "x.xlsx")
        with pytest.raises(InteropError, match="no file"):
            import_labels(store, work / "missing.csv")
        (work / "empty.csv").write_text("annotator,refusal\n")
        with pytest.raises(InteropError, match="holds no labels"):
            import_labels(store, work / "empty.csv")


def test_busy_port_and_missing_store_are_one_line_errors(work):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = cli("view", "--port", str(port), cwd=work)
    assert p.returncode == 2 and "cannot serve on 127.0.0.1" in p.stderr and "--port" in p.stderr
    p = cli("annotate", "--db", "nothing.db", cwd=work)
    assert p.returncode == 2 and "no results at --db nothing.db" in p.stderr
    p = cli("annotate", "--annotator", "a b", cwd=work)
    assert p.returncode == 2 and "annotator name" in p.stderr


@pytest.mark.parametrize("command", ["view", "annotate"])
def test_the_command_serves_on_loopback(work, command):
    args = [sys.executable, "-m", "deflectbench", command, "--port", "0"]
    if command == "annotate":
        args += ["--sample", "5", "--annotator", "alice"]
    proc = subprocess.Popen(
        args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith(f"{command}: http://127.0.0.1:"):
                url = line.split(": ", 1)[1].strip()
            elif not line and proc.poll() is not None:
                break
        assert url, proc.stderr.read()
        with urllib.request.urlopen(url, timeout=10) as res:
            page = res.read().decode()
        assert res.status == 200 and "DeflectBench" in page
        if command == "annotate":
            assert url.endswith("?annotator=alice")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_port_or_host_that_fails_leaves_no_sample_behind(work):
    """The server binds before the sample is drawn: a first try on a busy port or a bad
    --host used to store a 200-item sample, which a later --sample 20 could never shrink."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = cli("annotate", "--port", str(port), "--sample", "7", cwd=work)
    assert p.returncode == 2 and "pass another --port" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = cli("annotate", "--host", "no-such-host.invalid", cwd=work)
    assert p.returncode == 2 and "give --host an IP address" in p.stderr
    with Store.open(work / "deflectbench.db", readonly=True) as store:
        assert store.annotation_sample() == []


def test_label_files_with_a_misspelt_column_or_no_annotator_say_so(work):
    """A misspelt column used to be dropped silently (the file then "held no labels"), and a
    row without annotator was blamed on the name ''."""
    p = cli("annotate", "--sample", "5", "--export-sample", "sample.csv", cwd=work)
    assert p.returncode == 0, p.stderr
    rows = _read_csv(work / "sample.csv")
    with (work / "typo.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "refusl"])
        w.writerow([rows[0]["item_id"], "1"])
    p = cli("annotate", "--import", "typo.csv", "--annotator", "crowd", cwd=work)
    assert p.returncode == 2 and "typo.csv:1: unknown column 'refusl'" in p.stderr
    (work / "typo.jsonl").write_text(json.dumps({"item_id": rows[0]["item_id"], "refusl": 1}))
    p = cli("annotate", "--import", "typo.jsonl", "--annotator", "crowd", cwd=work)
    assert p.returncode == 2 and "typo.jsonl:1: unknown column 'refusl'" in p.stderr
    with (work / "nobody.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "refusal", "created_at"])
        w.writerow([rows[0]["item_id"], "1", ""])
        w.writerow([rows[1]["item_id"], "1", "yesterday"])
    p = cli("annotate", "--import", "nobody.csv", cwd=work)
    assert p.returncode == 2
    assert "nobody.csv:2: no annotator: fill the annotator column or pass --annotator" in p.stderr
    p = cli("annotate", "--import", "nobody.csv", "--annotator", "bob", cwd=work)
    assert p.returncode == 2 and "nobody.csv:3: created_at is 'yesterday'" in p.stderr
    with Store.open(work / "deflectbench.db", readonly=True) as store:
        assert store.labels() == []


def test_exported_notes_import_back_unchanged(work):
    """Export guards formula-like notes with a leading ' ; importing the file again used to
    keep that ' in the note, so each round trip changed it."""
    p = cli("annotate", "--sample", "5", "--export-sample", "sample.csv", cwd=work)
    assert p.returncode == 0, p.stderr
    item = _read_csv(work / "sample.csv")[0]["item_id"]
    with Store.open(work / "deflectbench.db") as store:
        gid = next(i.gen_id for i in store.annotation_sample() if i.item_id == item)
        store.save_label(HumanLabel(gid, "alice", {"refusal": 1}, note="=SUM(A1) -1 @x"))
    for _ in range(2):
        assert cli("annotate", "--export", "labels.csv", cwd=work).returncode == 0
        assert _read_csv(work / "labels.csv")[0]["note"] == "'=SUM(A1) -1 @x"
        p = cli("annotate", "--import", "labels.csv", cwd=work)
        assert p.returncode == 0, p.stderr
        with Store.open(work / "deflectbench.db", readonly=True) as store:
            assert store.labels("alice")[0].note == "=SUM(A1) -1 @x"


def test_two_jobs_at_once_and_another_packs_sample_are_named(work):
    """--import with --export-sample used to import and ignore the rest; a --benchmark the
    store was not run with was told to "run deflectbench run first"."""
    p = cli("annotate", "--import", "a.csv", "--export-sample", "b.csv", cwd=work)
    assert p.returncode == 2 and "--import and --export-sample each do one job" in p.stderr
    p = cli("annotate", "--benchmark", "deflectbench-v1-es", "--export-sample", "b.csv", cwd=work)
    assert p.returncode == 2 and "pass the --benchmark the results were made with" in p.stderr
    assert not (work / "b.csv").exists()


def test_an_unwritable_export_sample_fails_before_the_sample_is_drawn(work):
    """--export-sample s.txt (or into a missing folder) drew and stored a 200-item sample,
    then refused the file; the sample could never be shrunk again."""
    for out in ("s.txt", "missing/s.csv"):
        p = cli("annotate", "--sample", "5", "--export-sample", out, cwd=work)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "no folder missing; create it first" in p.stderr
    with Store.open(work / "deflectbench.db", readonly=True) as store:
        assert store.annotation_sample() == []
