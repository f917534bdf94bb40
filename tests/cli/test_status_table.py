"""`status` prints what the README promises (issue 23, item 8): per model and condition cells
planned / ok / errors / no answer / missing, per judge, and what was spent; at 80 columns."""

from __future__ import annotations

import os

from rich.console import Console

from deflectbench.benchmark import default_benchmark
from deflectbench.results.status import StatusResult
from deflectbench.views.terminal.run_tables import status_tables
from support.in_process import run_cli
from support.report_store import make_store

STATUS = {
    "models": {
        "anthropic/claude-haiku-4-5-20251001": {
            "planned": 3, "ok": 3, "errors": 0, "non_answers": {}, "truncated": 0,
            "conditions": {"release": {"planned": 3, "ok": 3, "errors": 0, "non_answers": {},
                                       "truncated": 0}},
        },
        "openai/gpt-5.5": {
            "planned": 10, "ok": 6, "errors": 1, "non_answers": {"content_filter": 1},
            "truncated": 0,
            "conditions": {
                "temp0": {"planned": 5, "ok": 4, "errors": 0, "non_answers": {}, "truncated": 0},
                "temp1": {"planned": 5, "ok": 2, "errors": 1,
                          "non_answers": {"content_filter": 1}, "truncated": 0},
            },
        },
    },
    "judges": {"lexical": {"judged": 6, "parse_errors": 0, "errors": 0}},
    "spent_usd": 1.25,
}  # fmt: skip


def _text(renderables) -> str:
    console = Console(record=True, width=80)
    for r in renderables:
        console.print(r)
    return console.export_text()


def test_one_row_per_model_and_condition_with_non_answers_and_spent():
    text = _text(status_tables(StatusResult.of("x.db", STATUS)))
    print(text)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "anthropic/claude-haiku-4-5-20251001" in text  # a long name kept whole
    lines = text.splitlines()
    under = {lines[i].strip(): lines[i - 1].split() for i in range(1, len(lines))}
    assert under["temp0"] == ["openai/gpt-5.5", "5", "4", "0", "0", "1"]  # condition below
    assert under["temp1"] == ["openai/gpt-5.5", "5", "2", "1", "1", "1"]  # 5 - 2 - 1 - 1
    assert "no answer" in text and "Judgments" in text and "lexical" in text
    assert "spent: 1.25 USD" in text


def test_status_of_a_store(tmp_path):
    db = make_store(tmp_path / "s.db", default_benchmark(), hostile=False)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    p = run_cli("status", "--db", db, env=env | {"COLUMNS": "80"})
    assert p.returncode == 0, p.stderr
    assert "model / condition" in p.stdout and "no answer" in p.stdout and "spent:" in p.stdout
    table = p.stdout[p.stdout.index("Generations in") : p.stdout.index("Judgments")]
    longest = max(len(line) for line in table.splitlines()[1:])  # the title is the db path
    assert longest <= 80, (longest, table)  # the table (other lines may wrap as prose)
    assert "judge-a" in p.stdout
