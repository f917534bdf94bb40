"""The import's fast lane (interop/bulk.py) changes nothing but the time: hostile release files
imported with common chunks written in bulk and with every chunk read the careful way give the
same problems, line for line, the same counts per file and the same stored rows, column for
column, at several chunk sizes, and again on a re-import into the same stores. A hypothesis
property does the same for one field of one record set to any JSON value."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.interop import bulk as fast_lane
from deflectbench.interop import decode, fidelity, import_paths, importer
from deflectbench.interop.release import EVAL_KEYS, GEN_KEYS
from deflectbench.store import Store
from support.fixtures import copy_of_release_fixture

MODELS = ("gpt-5.5", "grok-4.3")
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")


def release(root: Path, benchmark) -> tuple[list[Path], list[Path]]:
    """Two models' generations (failed requests among them) and two judges' files (parse
    errors among them)."""
    copy_of_release_fixture(
        root,
        models=MODELS,
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::10]],
        runs=3,
        seed=11,
        error_rate=0.05,
        parse_error_rate=0.05,
    )
    return sorted(root.rglob("generations_*.jsonl")), sorted(root.rglob("evals_*.jsonl"))


def dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (ids included), in one order."""
    con = sqlite3.connect(db)
    try:
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: sorted(con.execute(f'SELECT * FROM "{t}"'), key=repr) for t in tables}
    finally:
        con.close()


def import_both_ways(
    paths: list[Path], work: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, again: bool = True
) -> int:
    """Import ``paths`` in bulk and the careful way into two new stores (twice, with
    ``again``) and assert the same reports and rows; returns the chunks written in bulk."""
    written = {"chunks": 0}
    write = importer._write_rows

    def counted(store, kind, rows):
        done = write(store, kind, rows)
        written["chunks"] += done
        return done

    monkeypatch.setattr(importer, "_write_rows", counted)
    # a record without a timestamp is stored at the time of its import: one time for both
    monkeypatch.setattr(decode, "now_iso", lambda: "2026-12-04T00:00:00+00:00")
    seen = []
    for bulk in (True, False):
        monkeypatch.setattr(importer, "BULK", bulk)
        db = work / f"{'bulk' if bulk else 'careful'}-{chunk}.db"
        reports = []
        with Store.open(db) as store:
            for _ in range(2 if again else 1):
                r = import_paths(store, paths, chunk_records=chunk)
                counts = [(f.path, f.kind, f.read, f.imported, f.already_present, f.skipped)
                          for f in r.files]  # fmt: skip
                reports.append((r.problems, counts, r.notes))
        seen.append((reports, dump(db)))
    (bulk_reports, bulk_rows), (careful_reports, careful_rows) = seen
    assert bulk_reports == careful_reports
    for table, rows in careful_rows.items():
        assert [r for r in bulk_rows[table] if r not in rows] == [], table
    assert bulk_rows == careful_rows
    return written["chunks"]


# -- hostile files ------------------------------------------------------------------------------


def _set(key: str, value: Any):
    def edit(obj: dict[str, Any]) -> dict[str, Any] | str:
        obj[key] = value
        return obj

    return edit


def _drop(key: str):
    def edit(obj: dict[str, Any]) -> dict[str, Any] | str:
        obj.pop(key, None)
        return obj

    return edit


def _reordered(obj: dict[str, Any]) -> dict[str, Any] | str:
    return dict(reversed(list(obj.items())))


def _raw(text: str):
    return lambda obj: text


#: What a damaged, edited or hostile file may hold, each applied to some random line.
EDITS_ANY = [
    _raw("{not json"),
    _raw("[1, 2, 3]"),
    _raw('{"a": NaN}'),
    _raw(" "),
    _set("controversy_level", 2),
    _set("controversy_level", "1"),
    _set("controversy_level", 1.0),
    _set("controversy_level", True),
    _set("claim_text", "An edited claim text."),
    _set("claim_id", "NO_SUCH_CLAIM"),
    _set("claim_id", ["L1"]),
    _set("prompt_id", 7),
    _set("run", 1.0),
    _set("run", "2"),
    _set("run", -1),
    _set("run", 10**30),
    _set("run", True),
    _set("timestamp", ""),
    _set("timestamp", None),
    _set("timestamp", 5),
    _set("unknown_field", {"b": 1, "a": [2, {"c": None}]}),
    _set("_private", 1),
    _drop("timestamp"),
    _drop("gen_id"),
    _reordered,
]
EDITS_GENERATION = [
    _set("model", "gpt\u200b-5.5"),
    _set("model", ""),
    _set("model", "m" * 300),
    _set("model", ["x"]),
    _set("model", "another-model"),
    _set("response", "ERROR: looks like an error, flagged as an answer"),
    _set("response", "said with a lone surrogate \ud800 inside"),
    _set("response", None),
    _set("is_error", 1),
    _set("is_error", 2),
    _set("is_error", True),
    _set("is_answer", 1),
    _set("input_tokens", -5),
    _set("input_tokens", 3.5),
    _set("output_tokens", 10**12),
    _set("prompt_text", "Another prompt."),
    _drop("prompt_text"),
    _set("gen_id", "not__the__right__id"),
    _set("fallacy", "ad_hominem"),
]
EDITS_EVAL = [
    _set("judge_model", "judge\u00ad"),
    _set("judge_model", 3),
    _set("gen_model", "nobody"),
    _set("gen_model", None),
    _set("parse_error", 1),
    _set("parse_error", 2),
    _set("parse_error", True),
    _set("refusal", 2),
    _set("refusal", "1"),
    _set("refusal", True),
    _set("refusal", None),
    _set("WA_present", -1),
    _set("compliance_clean", 1),
    _set("detected_fallacies", ["red_herring"]),
    _set("detected_fallacies", [{"x": 1}]),
    _set("detected_fallacies", "whataboutism"),
    _set("consistency_flag", True),
    _set("consistency_flag", 2),
    _set("raw_judge_response", 12),
    _set("raw_judge_response", None),
    _set("reasoning", ["a"]),
    _set("eval_id", "x"),
    _set("fallacy_requested", "red_herring"),
]


def _styled(line: str, rng: random.Random) -> str:
    """The same record in another JSON style, now and then: compact, ASCII-escaped, CRLF."""
    obj = json.loads(line)
    pick = rng.random()
    if pick < 0.05:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    if pick < 0.10:
        return json.dumps(obj, ensure_ascii=True)
    if pick < 0.12:
        return line + "\r"
    return line


def _dumps(obj: Any) -> str:
    """As the release writes a line; a lone surrogate (not UTF-8) as an escape."""
    line = json.dumps(obj, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj)
    return line


def mangle(path: Path, edits: list[Any], rng: random.Random, every: int) -> None:
    """About one line in ``every`` edited; repeats and conflicting twins added far apart; a
    BOM, blank lines and other styles here and there."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        if rng.randrange(every) == 0:
            edited = rng.choice(edits)(json.loads(line))
            line = edited if isinstance(edited, str) else _dumps(edited)
        else:
            line = _styled(line, rng)
        out.append(line)
        if rng.randrange(every * 4) == 0:
            out.append("")
        if i == 0:
            out[0] = "\ufeff" + out[0]
    twin = json.loads(lines[3])
    twin["response" if "response" in twin else "reasoning"] = "Other content, same key."
    out += [lines[1], json.dumps(twin, ensure_ascii=False), lines[2]]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.parametrize("chunk", [7, 60, 2_000])
def test_hostile_files_import_the_same_in_bulk_and_the_careful_way(
    tmp_path, benchmark, monkeypatch, chunk
):
    gens, evals = release(tmp_path / "rel", benchmark)
    rng = random.Random(chunk)
    for path in gens:
        mangle(path, EDITS_ANY + EDITS_GENERATION, rng, every=25)
    for path in evals:
        mangle(path, EDITS_ANY + EDITS_EVAL, rng, every=25)
    # a whole file of another JSON style, and one of a model the fixture never wrote
    compact = gens[0].with_name("generations_compact.jsonl")
    compact.write_text(
        "".join(
            json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=True) + "\n"
            for line in gens[1].read_text(encoding="utf-8").splitlines()
            if line.strip().startswith("{") and '"model": "grok' in line
        ),
        encoding="utf-8",
    )
    bulk_chunks = import_both_ways([tmp_path / "rel"], tmp_path, monkeypatch, chunk)
    if chunk < 2_000:
        assert bulk_chunks > 0  # the fast lane was taken, and left where it must be


def count_decoded(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """``{"n": lines the careful way decoded}``, counted from now on."""
    decoded = {"n": 0}
    for name in ("decode_generation", "decode_eval"):
        decode_one = getattr(importer, name)

        def counted(*args, decode_one=decode_one, **kwargs):
            decoded["n"] += 1
            return decode_one(*args, **kwargs)

        monkeypatch.setattr(importer, name, counted)
    return decoded


def test_a_clean_release_is_written_in_bulk_alone(tmp_path, benchmark, monkeypatch):
    gens, evals = release(tmp_path / "rel", benchmark)
    lines = sum(len(p.read_text().splitlines()) for p in [*gens, *evals])
    decoded = count_decoded(monkeypatch)
    chunks = import_both_ways([tmp_path / "rel"], tmp_path, monkeypatch, 100, again=False)
    assert decoded["n"] == lines  # the careful way decoded every line; in bulk, none
    assert chunks == sum(-(-len(p.read_text().splitlines()) // 100) for p in [*gens, *evals])


def test_a_release_imported_again_is_found_stored_without_decoding_a_line(
    tmp_path, benchmark, monkeypatch
):
    """A re-import reads each chunk of a stored release in one look (failed requests among
    them, written over as the careful way writes them over), and says the same as the careful
    way: every record already present, the same rows."""
    release(tmp_path / "rel", benchmark)
    decoded = count_decoded(monkeypatch)
    looked = {"chunks": 0}
    already = importer._already_stored

    def seen(*args, **kwargs):
        n = already(*args, **kwargs)
        looked["chunks"] += n > 0
        return n

    monkeypatch.setattr(importer, "_already_stored", seen)
    import_both_ways([tmp_path / "rel"], tmp_path, monkeypatch, 50)  # asserts both agree
    assert looked["chunks"] > 0
    with Store.open(tmp_path / "again.db") as store:
        monkeypatch.setattr(importer, "BULK", True)
        import_paths(store, [tmp_path / "rel"], chunk_records=50)
        failed = store.conn.execute("SELECT count(*) FROM generations WHERE error IS NOT NULL")
        assert failed.fetchone()[0] > 0  # the fixture's failed requests are stored
        decoded["n"] = 0
        report = import_paths(store, [tmp_path / "rel"], chunk_records=50)
    assert decoded["n"] == 0  # no line read the careful way
    assert report.problems == []
    assert all(f.imported == 0 and f.already_present == f.read > 0 for f in report.files)


def test_a_re_import_with_one_record_changed_reports_it_as_the_careful_way_does(
    tmp_path, benchmark, monkeypatch
):
    """Stores holding the release, then the release again with a stored record's content
    changed in each file: in bulk and the careful way, the same conflicts and the same rows."""
    gens, evals = release(tmp_path / "rel", benchmark)
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.setattr(decode, "now_iso", lambda: "2026-12-04T00:00:00+00:00")
    for name in ("bulk-50.db", "careful-50.db", "third.db"):
        with Store.open(work / name) as store:
            import_paths(store, [tmp_path / "rel"], chunk_records=50)
    for path, field in ((gens[0], "response"), (evals[0], "raw_judge_response")):
        lines = path.read_text(encoding="utf-8").splitlines()
        at = next(
            i for i, line in enumerate(lines[60:], 60) if line.startswith("{") and field in line
        )
        obj = json.loads(lines[at])
        obj[field] = "Other content, same key, on a re-import."
        lines[at] = json.dumps(obj, ensure_ascii=False)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_both_ways([tmp_path / "rel"], work, monkeypatch, 50, again=False)
    with Store.open(work / "third.db") as store:
        report = import_paths(store, [tmp_path / "rel"], chunk_records=50)
    conflicts = [p for p in report.problems if "conflicting duplicate" in p]
    assert len(conflicts) == 2, report.problems


# -- any value in any field ---------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(["generations", "evals"]),
    line=st.integers(min_value=0, max_value=40),
    key=st.sampled_from(sorted({*GEN_KEYS, *EVAL_KEYS, "is_answer", "extra_key"})),
    value=JSON,
)
def test_any_value_in_any_field_imports_the_same_both_ways(
    tmp_path_factory, benchmark, monkeypatch, kind, line, key, value
):
    work = tmp_path_factory.mktemp("any")
    gens, evals = release(work / "rel", benchmark)
    kept = gens[0].read_text(encoding="utf-8").splitlines()[:45]
    ids = {json.loads(g)["gen_id"] for g in kept}
    judged = [
        e
        for e in evals[0].read_text(encoding="utf-8").splitlines()
        if json.loads(e)["gen_id"] in ids
    ]
    for path, lines in ((gens[0], kept), (evals[0], judged[:45])):  # judge records of these
        if path.name.startswith(kind):
            obj = json.loads(lines[line])
            obj[key] = value
            lines[line] = _dumps(obj)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_both_ways([gens[0], evals[0]], work, monkeypatch, 20, again=False) >= 4


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "careful"])
def test_a_run_too_large_for_sqlite_is_its_line_s_problem(tmp_path, benchmark, monkeypatch, bulk):
    """It once ended the import with a traceback (OverflowError in the generation lookup)."""
    monkeypatch.setattr(importer, "BULK", bulk)
    gens, evals = release(tmp_path / "rel", benchmark)
    lines = evals[0].read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[4])
    obj["run"] = 10**30
    lines[4] = json.dumps(obj, ensure_ascii=False)
    evals[0].write_text("\n".join(lines) + "\n", encoding="utf-8")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [*gens, evals[0]])
    assert report.problems == [
        f"{evals[0]}:5: field 'run' must be from 0 to 1,000,000, got {10**30}"
    ]
    assert report.total("evals", "imported") == len(lines) - 1


@settings(max_examples=200, deadline=None)
@given(
    chunk=st.lists(
        st.tuples(st.text(max_size=4), JSON, st.booleans(), st.booleans()), min_size=1, max_size=6
    )
)
def test_a_chunk_s_line_styles_are_those_line_style_gives_line_by_line(chunk):
    """The fast lane asks fidelity.line_style line by line only when the chunk is not plain."""
    keys = ("gen_id", "value")
    lines = [
        json.dumps(
            {"gen_id": gid, "value": value},
            ensure_ascii=escaped,
            separators=(",", ":") if compact else None,
        )
        for gid, value, escaped, compact in chunk
    ]
    objects = [json.loads(line) for line in lines]
    assert fast_lane._styles(lines, objects, keys) == [
        fidelity.line_style(line, obj) for line, obj in zip(lines, objects, strict=True)
    ]


#: Pieces of JSON and of what json reads and orjson does not (NaN, a lone surrogate, integers
#: beyond 64 bits, which orjson turns into floats), and whitespace around values.
JSON_PIECES = st.sampled_from(
    ['{', '}', '"a"', '"b"', ':', ',', ' ', '1', '-0', '1.5', '1e400', 'NaN', '-Infinity',
     '18446744073709551616', '-9223372036854775809', '9223372036854775807', '"\\ud800"',
     '"\\ud83d\\ude00"', '"x"', '[', ']', 'null', 'true', '\t', '"\\u0000"', '"é"', '{"a": 1}']
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.lists(JSON_PIECES, max_size=12).map("".join), min_size=1, max_size=4),
    keys=st.sampled_from([("a",), ("a", "b"), ("b", "a")]),
)
def test_orjson_reads_a_chunk_as_json_s_own_scanner_does(lines, keys):
    """The fast lane's reader with orjson gives what it gives with json's scanner alone: the
    same objects (values, their types, key order) or the same refusal."""
    numbered = [(i, line, None) for i, line in enumerate(lines, start=1)]
    fast = fast_lane.BulkRows.objects(numbered, keys)
    # the lines' bytes as the importer reads them: orjson reads those instead
    from_bytes = fast_lane.BulkRows.objects(numbered, keys, [line.encode() for line in lines])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast_lane, "ORJSON", False)
        plain = fast_lane.BulkRows.objects(numbered, keys)
    assert repr(fast) == repr(plain) == repr(from_bytes)
    assert [tuple(map(type, o.values())) for o in (fast or ([], []))[1]] == [
        tuple(map(type, o.values())) for o in (plain or ([], []))[1]
    ]


def test_a_chunk_whose_lines_are_one_object_each_is_read_by_orjson_or_json_alike():
    """Examples the property may not reach: a big integer read as an integer, NaN as json reads
    it, whitespace after the object refused as before."""
    read = fast_lane.BulkRows.objects
    big = [(1, '{"a": 18446744073709551616}', None), (2, '{"a": 1}', None)]
    assert read(big, ("a",)) == (
        ['{"a": 18446744073709551616}', '{"a": 1}'],
        [{"a": 2**64}, {"a": 1}],
    )
    nan = read([(1, '{"a": NaN}', None)], ("a",))
    assert nan is not None and repr(nan[1]) == "[{'a': nan}]"
    assert read([(1, '{"a": 1} ', None)], ("a",)) is None
    assert read([(1, '{"a": 1}{"a": 2}', None)], ("a",)) is None
    assert fast_lane.ORJSON  # a dependency: the fast lane reads with it


_FILES: dict[str, Path] = {}
#: Values orjson reads as floats where json reads them as floats or as integers.
FLOATS = [1.5, 0.0, 1.0, -1e300, 2**64, -(2**63) - 1, 10**30]


def _chunk_rows(kind: str, lines: list[str], catalog: Any) -> Any:
    """The fast lane's rows of a chunk (judge records' generations numbered in order)."""
    rows = fast_lane.BulkRows(catalog)
    numbered = [(i, line, None) for i, line in enumerate(lines, start=1)]
    raws = [line.encode() for line in lines]
    if kind == "generations":
        return rows.generations(numbered, raws)
    parsed = rows.objects(numbered, EVAL_KEYS, raws, floats=True)
    ids = lambda named: {key: n for n, key in enumerate(dict.fromkeys(named), start=1)}  # noqa: E731
    return None if parsed is None else rows.evals(parsed, ids)


def _float_chunks(kind: str, benchmark: Any, work: Path) -> Any:
    """The first lines of a release file, and each of them with one field set to a float
    (or an integer orjson reads as one), for every field and every value of :data:`FLOATS`:
    on the first line, and on a failed request's (a parse error's) line."""
    if kind not in _FILES:  # one release for every test
        gens, evals = release(work / "rel", benchmark)
        _FILES.update(generations=gens[0], evals=evals[0])
    lines = _FILES[kind].read_text(encoding="utf-8").splitlines()
    flag = "is_error" if kind == "generations" else "parse_error"
    odd = next(i for i, line in enumerate(lines) if json.loads(line)[flag] == 1)
    lines = lines[: odd + 1]
    for at in (0, odd):
        for key in json.loads(lines[at]):
            for value in FLOATS:
                obj = json.loads(lines[at])
                obj[key] = value
                yield lines, [*lines[:at], json.dumps(obj, ensure_ascii=False), *lines[at + 1 :]]


@pytest.mark.parametrize("kind", ["generations", "evals"])
def test_a_chunk_with_a_float_in_any_field_is_refused_as_json_s_reading_refuses_it(
    tmp_path, benchmark, kind
):
    """orjson's objects are not searched for floats (an integer beyond 64 bits is one there):
    the fast lane refuses a chunk with one in any field, as it refuses what json's own scanner
    reads of it (the reader the chunk went to before)."""
    from deflectbench.interop.release import Catalog

    catalog = Catalog(benchmark)
    n = 0
    for lines, edited in _float_chunks(kind, benchmark, tmp_path):
        assert _chunk_rows(kind, lines, catalog) is not None  # (in bulk as it is)
        assert _chunk_rows(kind, edited, catalog) is None, edited
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fast_lane, "ORJSON", False)
            assert _chunk_rows(kind, edited, catalog) is None
        n += 1
    assert n >= 2 * len(FLOATS) * len(GEN_KEYS)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(["generations", "evals"]),
    line=st.integers(min_value=0, max_value=30),
    key=st.sampled_from(sorted({*GEN_KEYS, *EVAL_KEYS})),
    value=st.sampled_from(FLOATS) | st.floats(allow_nan=False, allow_infinity=False),
)
def test_a_chunk_with_a_float_anywhere_is_refused_as_json_s_reading_refuses_it(
    tmp_path_factory, benchmark, kind, line, key, value
):
    """orjson's objects are not searched for floats (an integer beyond 64 bits is one there):
    the fast lane refuses such a chunk, as it refuses what json's own scanner reads of it."""
    from deflectbench.interop.release import Catalog

    if kind not in _FILES:  # one release for every example
        gens, evals = release(tmp_path_factory.mktemp("f") / "rel", benchmark)
        _FILES.update(generations=gens[0], evals=evals[0])
    lines = _FILES[kind].read_text(encoding="utf-8").splitlines()[:31]
    catalog = Catalog(benchmark)
    assert _chunk_rows(kind, lines, catalog) is not None  # (a chunk in bulk as it is)
    obj = json.loads(lines[line])
    if key not in obj:
        return
    obj[key] = value
    lines[line] = json.dumps(obj, ensure_ascii=False)
    assert _chunk_rows(kind, lines, catalog) is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast_lane, "ORJSON", False)
        assert _chunk_rows(kind, lines, catalog) is None
