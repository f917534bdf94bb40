"""analyze and report take their shared keywords as one AnalysisSettings: every keyword the
command line forwards is one of them, and a misspelt keyword is a TypeError as for any function."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.api.results import AnalysisSettings, analyze, report
from deflectbench.cli.results import AnalysisFlags, ReportAnalysisFlags


def test_the_command_line_forwards_exactly_the_shared_keywords() -> None:
    keys = set(AnalysisSettings.__annotations__)
    assert set(AnalysisFlags().settings()) == keys
    assert set(ReportAnalysisFlags().settings()) == keys


@pytest.mark.parametrize("call", [analyze, report])
def test_a_misspelt_keyword_is_a_type_error(call, tmp_path: Path) -> None:
    from deflectbench.store import Store

    Store.open(tmp_path / "r.db").close()
    with pytest.raises(TypeError, match="'resample'"):
        call(tmp_path / "r.db", **{"resample": 10})
