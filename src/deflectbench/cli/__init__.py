"""The ``deflectbench`` command line. Thin: parse, call the library, print.

``app`` (the typer app, :func:`main`, one-line errors and exit codes), ``options`` (the shared
flags), ``progress`` (bars and the graceful Ctrl-C), one module per command group (``spec``;
``run``: run, judge, status; ``results``: analyze, report, import, export) and ``tables``
(every table the terminal shows). Each command imports what it uses inside its function, so
``--version`` and ``--help`` load none of the analysis, the report or the model SDKs
(``tests/cli/test_startup.py``, ``bench/startup.py``).
"""

__all__ = ["main"]


def main() -> None:
    """The ``deflectbench`` command (the app is built here, not when a module of this package,
    e.g. ``tables``, is imported on its own)."""
    import atexit
    import gc
    import os
    import sys

    if sys.argv[1:] == ["--version"]:  # answered before typer and the app load (issue 36)
        from deflectbench import __version__

        sys.stdout.write(f"deflectbench {__version__}\n")
        return
    # The analysis multiplies small matrices (1,000 resamples x 80 claims): OpenBLAS's threads
    # cost 50 times the work in CPU there, spinning (issue 36); set before numpy loads. A
    # value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # A command's process keeps nearly all it makes (modules, frames): the cyclic collector's
    # default pace (every 700 new objects) re-walked them 220 times for about 500 cycles found,
    # 5% of a report's CPU (issue 36), and a walk every 100,000 still walked the 75,000 objects
    # the imports keep, once, for nothing (2%). Walked every 250,000: analyze, report, compare
    # and import at paper scale and 10x walk none, with the same peak memory; a long run frees
    # its garbage as before, later. The library leaves its host's collector alone.
    gc.set_threshold(250_000, 10, 10)

    from deflectbench.cli.app import main as run_app

    # At exit, the objects the SDKs and pandas made frozen: the interpreter's last garbage
    # collections skip them (seconds on a busy machine; issue 37), the OS frees the memory.
    atexit.unregister(gc.freeze)  # once, however often main runs in one process
    atexit.register(gc.freeze)
    run_app()
