from __future__ import annotations

import pytest

from deflectbench.benchmark import default_benchmark


@pytest.fixture
def benchmark():
    return default_benchmark()
