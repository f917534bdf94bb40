"""Hostile text on the terminal (issue 22): ``monitor`` shows escape sequences in a reply or an
id (window title, screen clear, colours, a one-byte CSI, a bidi override) as visible escapes,
never sends them; its JSON lines stay the same JSON values."""

from __future__ import annotations

import json

import pytest

from deflectbench.escaping import json_line_safe, terminal_safe
from support.in_process import run_cli

ATTACKS = [
    "\x1b]0;owned\x07",  # retitle the window
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b[31mred",  # colour what follows
    "\x9b31m",  # C1 CSI
    "\u202eevil",  # right-to-left override
    "\x7f\x08",  # DEL, backspace
]
RAW = ("\x1b", "\x9b", "\u202e", "\x07", "\x08", "\x7f")


@pytest.mark.parametrize("attack", ATTACKS)
def test_terminal_safe_leaves_nothing_a_terminal_acts_on(attack):
    shown = terminal_safe(f"I can't help with that. {attack}")
    assert not any(c in shown for c in RAW)
    assert shown.startswith("I can't help with that.")


def test_the_monitor_table_escapes_text_and_ids(tmp_path):
    path = tmp_path / "replies.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"id{a}", "text": f"I can't help with that. {a}"}) + "\n"
            for a in ATTACKS
        ),
        encoding="utf-8",
    )
    p = run_cli("monitor", path, env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    assert not any(c in p.stdout + p.stderr for c in RAW), repr(p.stdout)
    assert "\\x1b" in p.stdout


def test_the_monitor_jsonl_output_is_the_same_json_without_raw_controls(tmp_path):
    path = tmp_path / "replies.jsonl"
    rows = [{"id": f"id{a}", "text": f"Sure. {a}"} for a in ATTACKS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    p = run_cli("monitor", path, "--jsonl", env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    assert not any(c in p.stdout for c in RAW)
    ids = [json.loads(line)["id"] for line in p.stdout.splitlines()]
    assert ids == [r["id"] for r in rows]


def test_json_line_safe_keeps_the_value():
    value = {"a": "x\x9by\u202ez\x7f"}
    line = json_line_safe(json.dumps(value, ensure_ascii=False))
    assert json.loads(line) == value and "\x9b" not in line
