"""Model, judge and file text never acts on the terminal (issue 22, item 4): a store whose
model id, served model id, judge name, reply and judge reasoning hold escape sequences (as an
old store or a hand-edited one may) is shown by status, analyze and validate with no raw ESC,
C1 or bidi control on stdout; status (table and --json) warns of replies another model
served; --resamples is sized for the pack's own claims."""

from __future__ import annotations

import json
import os

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from support.in_process import run_cli
from support.report_store import make_store

EVIL_MODEL = "acme/alpha-1\x1b]0;pwned\x07\x1b[2J\x9b2J"
EVIL_JUDGE = "judge-b\x1b[31m\u202e"
EVIL_TEXT = "Sure.\x1b[2J\x1b]0;title\x07 \x9b31m \u202eevil"
SERVED = "gpt-4o-evil\x1b[5m"
ACTIVE = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    db = make_store(tmp_path_factory.mktemp("t") / "s.db", default_benchmark(), hostile=False)
    with Store.open(db) as store:
        c = store.conn
        for table in ("generations", "planned_cells"):
            c.execute(f"UPDATE {table} SET model = ? WHERE model = 'acme/alpha-1'", (EVIL_MODEL,))
        c.execute("UPDATE generations SET response = ? WHERE response IS NOT NULL", (EVIL_TEXT,))
        c.execute("UPDATE judgments SET judge = ? WHERE judge = 'judge-b'", (EVIL_JUDGE,))
        c.execute("UPDATE judgments SET reasoning = ?", (EVIL_TEXT,))
        c.execute(
            "UPDATE generations SET served_model = ? WHERE gen_id IN "
            "(SELECT gen_id FROM generations WHERE model = 'acme/beta-2' AND error IS NULL "
            "ORDER BY gen_id LIMIT 3)",
            (SERVED,),
        )
        c.execute(
            "UPDATE generations SET served_model = 'beta-2-2025-01-01' WHERE model = "
            "'acme/beta-2' AND served_model IS NULL AND error IS NULL"
        )
    return db


def _env():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return env | {"COLUMNS": "100"}


def _no_active(text: str) -> None:
    bad = [c for c in ACTIVE if c in text]
    assert not bad, f"raw {bad!r} on stdout"


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("status", "--json"),
        ("analyze", "--resamples", "20"),
        ("analyze", "--resamples", "20", "--json", "-"),
        ("validate", "--resamples", "20"),
    ],
    ids=" ".join,
)
def test_no_raw_control_reaches_stdout(hostile_db, args):
    p = run_cli(*args, "--db", hostile_db, env=_env())
    assert p.returncode in (0, 1, 5), p.stderr
    _no_active(p.stdout)
    _no_active(p.stderr)
    if args[0] == "status":
        assert "\\x1b" in p.stdout or "\\u001b" in p.stdout  # shown, escaped


def test_status_warns_of_replies_another_model_served(hostile_db):
    p = run_cli("status", "--db", hostile_db, env=_env())
    lines = [x for x in p.stdout.splitlines() if "another model served" in x]
    assert len(lines) == 1, p.stdout  # the dated snapshot is the same model: no warning
    assert "acme/beta-2: 3 of " in lines[0] and "gpt-4o-evil\\x1b[5m" in lines[0]
    data = json.loads(run_cli("status", "--json", "--db", hostile_db, env=_env()).stdout)
    (entry,) = data["served_by"]
    assert entry["model"] == "acme/beta-2" and entry["served"] == {SERVED: 3}
    assert entry["replies"] > 3


def test_resamples_are_sized_for_the_pack_claims():
    from deflectbench.config.plan import RESAMPLE_BYTES_PER_CLAIM, check_resamples
    from deflectbench.errors import ConfigError

    free = 2 * 1_000 * (RESAMPLE_BYTES_PER_CLAIM * 10 + 64)  # room for 1,000 at 10 claims
    assert check_resamples(1_000, claims=10, available=free) == 1_000
    with pytest.raises(ConfigError, match=r"the largest that fits is 117$"):  # 384,000 // 3,264
        check_resamples(1_000, claims=100, available=free)


def test_analyze_refuses_resamples_past_the_memory_for_its_pack(hostile_db, monkeypatch):
    from deflectbench.config import plan

    b = default_benchmark()
    per = plan.RESAMPLE_BYTES_PER_CLAIM * len(b.claims) + 64
    monkeypatch.setattr(plan, "available_memory", lambda: 2 * 500 * per)
    p = run_cli("analyze", "--resamples", "501", "--db", hostile_db, env=_env())
    assert p.returncode != 0
    assert "the largest that fits is 500" in p.stderr, p.stderr
    assert len([x for x in p.stderr.splitlines() if x.strip()]) == 1
