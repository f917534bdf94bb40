"""The package's version, in one place: ``pyproject.toml`` reads it when the package is built
(``[tool.setuptools.dynamic]``), ``deflectbench.__version__`` and ``--version`` read it here,
without importlib.metadata (tens of milliseconds of a command's start-up)."""

__version__ = "0.1.0"
