"""``import-batch`` on the outputs engines really give (issue 33, point 6): an output in two
files, a file with another part's lines, vLLM's error shapes, another model's replies, hostile
lines; every answer imported once, every other line counted by why, the counts of cells."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deflectbench.models.batch_api import ERRORED, EXPIRED, SUCCEEDED
from deflectbench.models.file_batch import FileLine, Unreadable, read_line
from support.cli_runs import write_toml
from support.in_process import run_cli

CLAIMS = "L1_US_01,L2_INT_02"
TEMPLATES = "explicit_direct_WA,explicit_coach_AH,implicit_neutral"


def _answer(cid: str, n: int, model: str, text: str = "But what about their record?") -> dict:
    return {
        "id": f"vllm-{n}",
        "custom_id": cid,
        "response": {
            "status_code": 200,
            "request_id": f"vllm-batch-{n}",
            "body": {
                "id": f"cmpl-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"{text} ({cid})"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
            },
        },
        "error": None,
    }


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _setup(tmp: Path, *args: str, name: str = "batch.jsonl") -> tuple[Path, Path, list[str]]:
    cfg = write_toml(
        tmp / "run.toml",
        {
            "run": {"models": ["eng/m1"], "judges": ["lexical"]},
            "providers.eng": {"base_url": "http://127.0.0.1:9/v1"},  # never contacted
        },
    )
    db, batch = tmp / "r.db", tmp / name
    p = run_cli(
        "run", "--config", cfg, *args, "--db", db, "--batch-file", batch, "--no-progress",
        "--no-report",
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    ids = [json.loads(x)["custom_id"] for x in batch.read_text().splitlines()]
    return cfg, db, ids


def _import(cfg: Path, db: Path, results: Path, *more: str) -> tuple[Any, dict]:
    p = run_cli("import-batch", results, "--config", cfg, "--db", db, *more, "--json", "-")
    return p, json.loads(p.stdout)


def _rows(db: Path) -> dict[str, tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return {
            f"{r[0]}/{r[1]}": r[2:]
            for r in con.execute("SELECT claim_id, prompt_id, response, error FROM generations")
        }
    finally:
        con.close()


def _count(db: Path, sql: str) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute(sql).fetchone()[0])
    finally:
        con.close()


def test_an_output_in_two_files_imports_every_answer_once(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    assert len(ids) == 6
    first, second = tmp_path / "part1.jsonl", tmp_path / "part2.jsonl"
    first.write_text(_lines([_answer(c, n, "m1") for n, c in enumerate(ids[:4])]))
    second.write_text(_lines([_answer(c, n, "m1") for n, c in enumerate(ids[4:])]))

    p, got = _import(cfg, db, first)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 4 and got["no_result_line"] == 2
    assert got["replaced_errors"] == 0
    rows = _rows(db)
    assert sum(1 for r in rows.values() if r[1] and "no readable result line" in r[1]) == 2

    # the second part: its answers replace the "no result line" error rows
    p, got = _import(cfg, db, second)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 2 and got["replaced_errors"] == 2
    assert got["skipped_duplicates"] == 0 and got["skipped_other_cells"] == 0
    rows = _rows(db)
    assert len(rows) == 6 and all(r[0] and r[1] is None for r in rows.values())
    assert got["judged"] == {"lexical": 2}
    assert _count(db, "SELECT count(*) FROM judgments WHERE judge = 'lexical'") == 6
    assert _count(db, "SELECT count(*) FROM batch_items WHERE state != 'done'") == 0

    # both again, and the whole output concatenated: nothing replaced, each line a duplicate
    before = _rows(db)
    whole = tmp_path / "whole.jsonl"
    whole.write_text(first.read_text() + second.read_text())
    p, got = _import(cfg, db, whole)
    assert p.returncode == 0
    assert got["cells_answered"] == 0 and got["skipped_duplicates"] == 6
    assert _rows(db) == before

    # the terminal says the same counts
    p = run_cli("import-batch", second, "--config", cfg, "--db", db)
    assert "0 cells answered" in p.stdout and "2 duplicates" in p.stdout


def test_a_later_answer_never_replaces_an_answer_or_an_engine_error(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    engine_error = {
        "id": "x",
        "custom_id": ids[0],
        "response": {"status_code": 400, "request_id": "r", "body": None},
        "error": "prompt too long",
    }
    first = tmp_path / "a.jsonl"
    first.write_text(_lines([engine_error] + [_answer(c, n, "m1") for n, c in enumerate(ids[1:])]))
    p, got = _import(cfg, db, first)
    assert got["cells_answered"] == 5 and got["errors"] == 1
    before = _rows(db)
    later = tmp_path / "b.jsonl"
    later.write_text(_lines([_answer(c, 9, "m1", "Another answer") for c in ids]))
    p, got = _import(cfg, db, later)
    assert p.returncode == 0
    assert got["cells_answered"] == 0 and got["skipped_duplicates"] == 6
    assert _rows(db) == before  # the engine's error stays (--retry-errors sends it again)


def test_a_duplicate_answer_in_the_file_is_counted_and_the_first_kept(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    rows = [_answer(c, n, "m1") for n, c in enumerate(ids)]
    again = _answer(ids[0], 99, "m1", "A second answer")
    failed = {"id": "e", "custom_id": ids[1], "response": None, "error": "late failure"}
    results = tmp_path / "r.jsonl"
    results.write_text(_lines([failed, *rows, again]))  # an error line before the answer
    p, got = _import(cfg, db, results)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 6 and got["skipped_duplicates"] == 2 and got["errors"] == 0
    assert all("A second answer" not in (r[0] or "") for r in _rows(db).values())


@pytest.mark.slow
def test_two_stray_lines_leave_the_1200_answers_imported(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--preset", "full", "--samples", "1")
    assert len(ids) == 1200
    results = tmp_path / "results.jsonl"
    stray = [_answer("g-L9_XX_99-explicit_direct_WA-0", 1, "m1"), _answer("part2-17", 2, "m1")]
    results.write_text(
        _lines([stray[0], *(_answer(c, n, "m1") for n, c in enumerate(ids)), stray[1]])
    )
    copy = tmp_path / "copy.db"
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    p, got = _import(cfg, db, results)
    assert p.returncode == 0, p.stderr
    assert got["lines"] == 1202
    assert got["cells_answered"] == 1200  # cells, not cells and the lexical judge's verdicts
    assert got["skipped_other_cells"] == 2
    assert got["judged"] == {"lexical": 1200}
    assert got["no_result_line"] == 0 and got["errors"] == 0
    assert _count(db, "SELECT count(*) FROM generations WHERE error IS NULL") == 1200
    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert p.returncode == 0
    assert "1,202 lines; 0 cells answered" in p.stdout
    assert "2 for cells of no batch file" in p.stdout and "1,200 duplicates" in p.stdout
    # the terminal of the first import, on a copy of the store as it was
    p = run_cli("import-batch", results, "--config", cfg, "--db", copy)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"{results}: 1,202 lines; 1,200 cells answered",
        "skipped: 2 for cells of no batch file of this store (another part's or run's)",
        "judged now: lexical 1,200 verdicts",
    ]


VLLM_ERRORS: dict[str, dict[str, Any]] = {
    # run_batch's make_error_request_output: ``error`` a string, no body
    "string": {
        "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": None},
        "error": "This model's maximum context length is 4096 tokens",
    },
    # an ErrorResponse as ``error`` (older vLLM: flat; newer: nested under ``error``)
    "flat": {
        "response": {"status_code": 400, "request_id": "vllm-batch-2", "body": None},
        "error": {
            "object": "error",
            "message": "temperature must be non-negative",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    },
    "nested": {
        "response": {"status_code": 404, "request_id": "vllm-batch-3", "body": None},
        "error": {"error": {"message": "The model `m9` does not exist.", "code": 404}},
    },
    # a response that is not 200, its body the error object
    "body": {
        "response": {
            "status_code": 500,
            "request_id": "vllm-batch-4",
            "body": {"object": "error", "message": "CUDA out of memory", "code": 500},
        },
        "error": None,
    },
}


@pytest.mark.parametrize("shape", sorted(VLLM_ERRORS))
def test_vllm_error_shapes_keep_their_message(shape: str) -> None:
    line = read_line(1, json.dumps({"id": "v", "custom_id": "g-a", **VLLM_ERRORS[shape]}).encode())
    assert isinstance(line, FileLine) and line.kind == ERRORED
    message = _message_of(VLLM_ERRORS[shape])
    assert line.error is not None and message in line.error
    status = VLLM_ERRORS[shape]["response"]["status_code"]
    assert line.error.startswith(f"HTTP {status}: ")


def _message_of(shape: dict) -> str:
    e = shape["error"] or shape["response"]["body"]
    if isinstance(e, str):
        return e
    return e.get("message") or e["error"]["message"]


def test_openai_error_file_lines_keep_their_kind() -> None:
    raw = {
        "custom_id": "g-a",
        "response": None,
        "error": {"code": "batch_expired", "message": "This request could not be executed"},
    }
    line = read_line(3, json.dumps(raw).encode())
    assert isinstance(line, FileLine) and line.kind == EXPIRED
    assert line.error == "batch_expired: This request could not be executed"


def test_vllm_errors_are_stored_with_their_messages(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    shapes = sorted(VLLM_ERRORS)
    rows = [{"id": f"v{n}", "custom_id": ids[n], **VLLM_ERRORS[s]} for n, s in enumerate(shapes)]
    rows += [_answer(c, n, "m1") for n, c in enumerate(ids[len(shapes) :])]
    results = tmp_path / "r.jsonl"
    results.write_text(_lines(rows))
    p, got = _import(cfg, db, results)
    assert p.returncode == 0, p.stderr
    assert got["errors"] == 4 and got["cells_answered"] == 2
    said = " | ".join(e["message"] for e in got["error_messages"])
    stored = " | ".join(r[1] for r in _rows(db).values() if r[1])
    for s in shapes:
        assert _message_of(VLLM_ERRORS[s]) in said
        assert _message_of(VLLM_ERRORS[s]) in stored
    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert p.returncode == 0  # all done before: nothing new


def test_another_models_file_is_not_imported_without_a_word(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    results = tmp_path / "r.jsonl"
    results.write_text(_lines([_answer(c, n, "Qwen/Other-7B") for n, c in enumerate(ids)]))
    p, got = _import(cfg, db, results)
    assert p.returncode == 1
    assert got["other_model_lines"] == [{"model": "Qwen/Other-7B", "lines": 6}]
    assert got["cells_answered"] == 0
    assert _count(db, "SELECT count(*) FROM generations") == 0
    assert _count(db, "SELECT count(*) FROM batch_items WHERE state = 'open'") == 6
    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert p.returncode == 1
    assert "6 lines are replies of another model" in p.stderr
    assert "'Qwen/Other-7B' (6 lines)" in p.stderr and "--accept-model Qwen/Other-7B" in p.stderr
    # said to accept it: imported
    p, got = _import(cfg, db, results, "--accept-model", "Qwen/Other-7B")
    assert p.returncode == 0 and got["cells_answered"] == 6


def test_hostile_lines_are_each_one_counted_skip(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    hostile = [
        b"not json at all",
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the parser goes
        json.dumps({"custom_id": ids[0], "response": _nest(900)}).encode(),
        b'{"custom_id": 17, "response": {}}',
        json.dumps({"custom_id": ids[0], "response": "a string"}).encode(),
        json.dumps({"custom_id": ids[0], "response": {"status_code": "200", "body": {}}}).encode(),
        json.dumps({"custom_id": ids[0], "response": {"status_code": 200, "body": [1]}}).encode(),
        b"[1, 2, 3]",
        b"\xff\xfe garbage \x00",
        b'{"custom_id": "' + b"x" * (17 * 1024 * 1024) + b'"}',  # longer than a line may be
        b"1" * 5000,
    ]
    good = [json.dumps(_answer(c, n, "m1")).encode() for n, c in enumerate(ids)]
    results = tmp_path / "r.jsonl"
    results.write_bytes(b"\n".join(hostile + good) + b"\n")
    p, got = _import(cfg, db, results)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert got["unreadable"] == len(hostile)
    assert got["cells_answered"] == 6
    assert got["lines"] == len(hostile) + 6
    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert f"{len(hostile)} unreadable lines skipped (line 1: not JSON" in p.stderr


def _nest(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_read_line_types() -> None:
    ok = read_line(1, json.dumps(_answer("g-a", 1, "m1")).encode())
    assert isinstance(ok, FileLine) and ok.kind == SUCCEEDED and ok.model == "m1"
    for raw in (b'{"custom_id": "g-a"}', b'{"custom_id": "g-a", "response": null}'):
        assert isinstance(read_line(2, raw), Unreadable)


def test_two_models_files_each_take_their_own_lines(tmp_path: Path) -> None:
    """Two models' files hold the same cell ids: a reply goes to the model it names, an error
    line (it names none) to the model the file's replies name; alone, it is not guessed."""
    db = tmp_path / "r.db"
    cfgs = {}
    for name in ("m1", "m2"):
        cfgs[name] = write_toml(
            tmp_path / f"{name}.toml",
            {
                "run": {"models": [f"eng/{name}"], "judges": ["lexical"]},
                "providers.eng": {"base_url": "http://127.0.0.1:9/v1"},
            },
        )
        p = run_cli(
            "run", "--config", cfgs[name], "--claims", CLAIMS, "--templates", TEMPLATES,
            "--db", db, "--batch-file", tmp_path / f"{name}.jsonl", "--no-progress",
            "--no-report",
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
    ids = [json.loads(x)["custom_id"] for x in (tmp_path / "m2.jsonl").read_text().splitlines()]
    fail = {"id": "e", "custom_id": ids[0], "response": None, "error": "engine stopped"}

    alone = tmp_path / "errors-only.jsonl"
    alone.write_text(_lines([fail]))
    p, got = _import(cfgs["m2"], db, alone)
    assert p.returncode == 1 and got["skipped_ambiguous"] == 1
    assert _count(db, "SELECT count(*) FROM generations") == 0

    m2 = tmp_path / "m2-out.jsonl"
    m2.write_text(_lines([fail] + [_answer(c, n, "m2") for n, c in enumerate(ids[1:])]))
    p, got = _import(cfgs["m2"], db, m2)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 5 and got["errors"] == 1 and got["models"] == {"eng/m2": "m2"}
    assert _count(db, "SELECT count(*) FROM generations WHERE model = 'eng/m2'") == 6
    assert _count(db, "SELECT count(*) FROM generations WHERE model = 'eng/m1'") == 0

    m1 = tmp_path / "m1-out.jsonl"
    m1.write_text(_lines([_answer(c, n, "m1") for n, c in enumerate(ids)]))
    p, got = _import(cfgs["m1"], db, m1)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 6 and got["models"] == {"eng/m1": "m1"}
    assert _count(db, "SELECT count(*) FROM generations WHERE error IS NULL") == 11


@pytest.mark.parametrize(
    "body",
    [
        {"choices": "x", "model": "m1"},
        {"choices": [], "model": "m1"},
        {"choices": [None]},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"content": ["a", {"b": 1}]}}]},
        {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": "a"}},
    ],
)
def test_a_mistyped_reply_body_is_an_outcome_never_an_exception(body: dict) -> None:
    from deflectbench.models.file_batch import FileBatches
    from deflectbench.models.openai_compat import OpenAICompatModel

    model = OpenAICompatModel("eng/m1", "m1", base_url="http://127.0.0.1:9/v1", api_key="x")
    raw = {"custom_id": "g-a", "response": {"status_code": 200, "body": body}}
    line = read_line(1, json.dumps(raw).encode())
    assert isinstance(line, FileLine)
    outcome = FileBatches(model).outcome(line)
    assert outcome.custom_id == "g-a" and outcome.kind in (SUCCEEDED, ERRORED)


def test_the_whole_output_after_a_part_takes_only_the_missing_cells(tmp_path: Path) -> None:
    cfg, db, ids = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    answers = [_answer(c, n, "m1") for n, c in enumerate(ids)]
    part = tmp_path / "part.jsonl"
    part.write_text(_lines(answers[:3]))
    p, got = _import(cfg, db, part)
    assert got["cells_answered"] == 3 and got["no_result_line"] == 3
    answered = {k: v for k, v in _rows(db).items() if v[1] is None}

    # the whole output, one missing cell's line now the engine's error: it replaces the
    # "no result line" row with the engine's message; the 3 answered before stay as they were
    failed = {"id": "e", "custom_id": ids[5], "response": None, "error": "engine: out of memory"}
    whole = tmp_path / "whole.jsonl"
    whole.write_text(_lines([*answers[:5], failed]))
    p, got = _import(cfg, db, whole)
    assert p.returncode == 0, p.stderr
    assert got["cells_answered"] == 2 and got["replaced_errors"] == 2
    assert got["errors"] == 1 and got["skipped_duplicates"] == 3
    assert [e["message"] for e in got["error_messages"]] == [
        "batch errored: engine: out of memory (after 1 tries)"
    ]
    rows = _rows(db)
    assert {k: v for k, v in rows.items() if k in answered} == answered
    assert sum(1 for v in rows.values() if v[1] is None) == 5
    assert not any("no readable result line" in (v[1] or "") for v in rows.values())


@pytest.mark.parametrize(
    ("own", "named", "same"),
    [
        ("m1", "m1", True),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct", True),
        ("gpt-4o", "openai/gpt-4o", True),
        ("gpt-4o", "gpt-4o-2024-08-06", True),
        ("gpt-4o", "gpt-4o-20240806", True),
        ("Llama-3-8B", "Llama-3-8B-Instruct", False),  # the online check's prefix rule: not here
        ("m1", "m1-evil", False),
        ("Qwen/Qwen2.5-7B", "Other/Qwen2.5-7B", False),
        ("m1", "M1", False),
    ],
)
def test_which_reply_model_is_the_cells_model(own: str, named: str, same: bool) -> None:
    from deflectbench.pipeline.batches.file_import import same_model

    assert same_model(own, named) is same


def test_an_output_for_no_cell_of_this_store_exits_1(tmp_path: Path) -> None:
    cfg, db, _ = _setup(tmp_path, "--claims", CLAIMS, "--templates", TEMPLATES)
    other = tmp_path / "other-store.jsonl"
    other.write_text(_lines([_answer(f"g-X_{n}-t-1", n, "m1") for n in range(4)]))
    p, got = _import(cfg, db, other)
    assert p.returncode == 1 and got["skipped_other_cells"] == 4
    p = run_cli("import-batch", other, "--config", cfg, "--db", db)
    assert p.returncode == 1 and "no line of this output is for a cell" in p.stderr
    assert _count(db, "SELECT count(*) FROM batch_items WHERE state = 'open'") == 6
