"""The ``deflectbench`` command line. Thin: parse, call the library, print.

``app`` (the typer app, :func:`main`, one-line errors and exit codes), ``options`` (the shared
flags), ``progress`` (bars and the graceful Ctrl-C), one module per command group (``spec``;
``run``: run, judge, status; ``results``: analyze, report, import, export) and ``tables``
(every table the terminal shows).
"""

from deflectbench.cli.app import main

__all__ = ["main"]
