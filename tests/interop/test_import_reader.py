"""The import's reader (interop/importer.py ``_lines``: blocks split into lines as they come,
the last line held back) against a plain reader of the whole file: any bytes (a BOM, CRLF,
blank and whitespace-only lines, bad UTF-8 among good, a missing last newline, lines longer
than a block) give the same lines at any block size, gzipped or not; ``_chunks`` gives them
``n`` at a time, each with its bytes (its text encoded as UTF-8)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.interop import importer


def plainly(data: bytes) -> list[tuple[int, str | None, str | None]]:
    """Every line split at ``\\n``, a BOM dropped from line 1, decoded alone (a bad byte: the
    line's problem), blank lines left out, a trailing ``\\r`` dropped."""
    out: list[tuple[int, str | None, str | None]] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = f"0x{raw[exc.start]:02x}"
            out.append((lineno, None, f"not UTF-8 (byte {byte} at column {exc.start + 1})"))
            continue
        if line.strip():
            out.append((lineno, line.rstrip("\r"), None))
    return out


PIECES = st.sampled_from(
    [b"\n", b"\r\n", b" ", b"\t\n", b"{", b'"a"', b"x" * 40, "é—“”".encode(), b"\xff", b"\xc3",
     "\u00a0".encode(), b"\xef\xbb\xbf", "\U0001f600".encode(), b"\x00"]
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(PIECES, max_size=60),
    bom=st.booleans(),
    block=st.sampled_from([1, 2, 5, 64, 1 << 20]),
    run=st.sampled_from([1, 3, 64]),
    chunk=st.sampled_from([1, 2, 7, 2_000]),
    gz=st.booleans(),
)
def test_any_bytes_read_as_a_plain_reader_reads_them(
    tmp_path_factory, pieces, bom, block, run, chunk, gz
):
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(pieces)
    path = tmp_path_factory.mktemp("r") / ("f.jsonl.gz" if gz else "f.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    expected = plainly(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(importer, "BLOCK_BYTES", block)
        mp.setattr(importer, "RUN_LINES", run)
        assert list(importer._lines(path)) == expected
        chunks = list(importer._chunks(path, chunk))
    assert [lines for lines, _ in chunks] == [
        expected[i : i + chunk] for i in range(0, len(expected), chunk)
    ]
    for lines, raws in chunks:
        assert raws == [None if text is None else text.encode() for _, text, _ in lines]


def test_a_line_longer_than_many_blocks_is_one_line(tmp_path: Path, monkeypatch):
    long = b'{"a": "' + b"y" * 5_000 + b'"}'
    (tmp_path / "f.jsonl").write_bytes(b"first\n" + long + b"\n\nlast")
    monkeypatch.setattr(importer, "BLOCK_BYTES", 7)
    assert list(importer._lines(tmp_path / "f.jsonl")) == [
        (1, "first", None),
        (2, long.decode(), None),
        (4, "last", None),
    ]
