"""``deflectbench annotate`` and ``view``: the local pages for human labels and for browsing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deflectbench.cli.console import UserError, console, err
from deflectbench.cli.options import (
    DEFAULT_DB,
    BenchmarkOption,
    ConsensusOption,
    DbOption,
    open_store,
    stored_benchmark,
)

if TYPE_CHECKING:
    from deflectbench.web import WebServer

#: The size of a first annotation sample when --sample is not given.
DEFAULT_SAMPLE = 200

HostOption = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS",
        help="Address to serve on. Default 127.0.0.1 (this machine only); any other address "
        "must be given here explicitly, and then anyone who can reach it can read the results.",
        show_default=False,
    ),
]


def annotate(
    sample: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Size of the annotation sample, stratified by model x outcome x framing "
            f"(default: {DEFAULT_SAMPLE} for a first sample). A stored sample is reused as it is "
            "unless a larger --sample is asked for; it is never shrunk (labels already made stay "
            "in it).",
            show_default=False,
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(
            help="Your name; labels are kept per annotator (letters, digits, ._@-). Without it "
            "the page asks. Each annotator opens the page with ?annotator=NAME.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample's draw.")] = 0,
    export_sample: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Write the blind sample (item_id, claim, response and empty label columns) to "
            "FILE (.csv or .jsonl) for annotators who work elsewhere, and exit.",
            show_default=False,
        ),
    ] = None,
    import_labels: Annotated[
        Path | None,
        typer.Option(
            "--import",
            metavar="FILE",
            help="Import human labels from FILE (.csv or .jsonl; columns in docs/annotation.md) "
            "and exit; --annotator fills an empty annotator column. All rows or none.",
            show_default=False,
        ),
    ] = None,
    export_labels: Annotated[
        Path | None,
        typer.Option(
            "--export",
            metavar="FILE",
            help="Write every human label (or --annotator's) to FILE (.csv or .jsonl) and exit.",
            show_default=False,
        ),
    ] = None,
    host: HostOption = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8765,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Label a sample of generations by hand on the rubric's 8 fields, in a local web page.

    The page is blind: it shows only the claim and the response (never the model, template,
    framing or the judges' scores), with the rubric beside it. Keyboard only: r s w a h f c l
    say yes to a field (Shift: no), n says no to every field still unset, u marks unsure, e
    writes a note, Enter goes to the next item and k back. Each change is saved to the results
    file at once, and an annotator resumes where they stopped. `deflectbench validate` then
    compares the judges with these labels. Each pack has its own sample, drawn from its own
    generations (`--benchmark`; a store holding several packs needs it); --import and --export
    work on every label, whichever pack. Details: docs/annotation.md.

    Examples:

        deflectbench annotate --sample 50 --export-sample sample.csv

        deflectbench annotate --annotator alice

        deflectbench annotate --import labels.csv --annotator crowd

        deflectbench annotate --export human-labels.jsonl

        deflectbench annotate --benchmark deflectbench-v1-es --annotator alice
    """
    from deflectbench.interop.labels import check_output, write_blind_sample
    from deflectbench.store.labels import check_annotator
    from deflectbench.web import AnnotateApp, WebServer, check_bind, ensure_sample, store_opener
    from deflectbench.web.jobs import label_job, one_job, sample_size

    jobs = {"--import": import_labels, "--export": export_labels, "--export-sample": export_sample}
    one_job(jobs)
    for out in (export_sample, export_labels):
        if out is not None:
            check_output(out)
    if annotator is not None:
        check_annotator(annotator)
    check_bind(host or "127.0.0.1", explicit=host is not None)
    store = open_store(db, must_exist=True)
    serves = all(value is None for value in jobs.values())
    # bind before drawing the sample: a busy port or a bad --host must not leave a sample behind
    server = (
        WebServer(None, host or "127.0.0.1", port, explicit=host is not None) if serves else None
    )
    try:
        done = label_job(
            store, import_from=import_labels, export_to=export_labels, annotator=annotator
        )
        if done is not None:
            console.print(done, highlight=False, markup=False)
            return
        benchmark = stored_benchmark(store, benchmark_name)
        with err.busy("drawing the annotation sample…"):
            plan = ensure_sample(
                store, benchmark, sample_size(store, benchmark, sample, DEFAULT_SAMPLE), seed
            )
        if plan.added:
            err.print(
                f"sample: {len(plan.items)} items from {plan.strata} strata (model x outcome x "
                f"framing), {plan.added} new",
                highlight=False,
            )
        if export_sample is not None:
            n = write_blind_sample(store, benchmark, export_sample)
            console.print(f"{n} items: {export_sample}", highlight=False, markup=False)
            return
        items = plan.items
        if not items:
            raise UserError("the annotation sample is empty: pass --sample N (N > 0)")
    except BaseException:
        if server is not None:
            server.close()
        raise
    finally:
        store.close()
    assert server is not None
    server.app = AnnotateApp(store_opener(db, readonly=False), benchmark, items, annotator)
    suffix = f"?annotator={annotator}" if annotator else ""
    console.print(f"{len(items)} items to label", highlight=False)
    _serve_with(server, "annotate", suffix)


def _serve_with(server: WebServer, what: str, suffix: str = "") -> None:
    console.print(f"{what}: {server.url}{suffix}", highlight=False, markup=False, soft_wrap=True)
    err.print("stop with Ctrl-C", highlight=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err.print("stopped; everything saved is in the results file", highlight=False)


def view(
    consensus: ConsensusOption = "mean",
    host: HostOption = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8766,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Browse every generation in a local web page: its prompt, response, both judges' fields
    and reasoning, the consensus, the outcome and any human labels.

    Not blind (use `deflectbench annotate` to label). Filter by model, condition, framing,
    template, claim, outcome, judge disagreement (on any field or one) and whether a human
    labelled it; the filters and the open generation live in the page's address, so a link
    such as http://127.0.0.1:8766/?outcome=soft_refusal&disagree=any can be passed to a
    colleague on the same machine. Read-only. One pack's generations (`--benchmark`; a store
    holding several packs needs it).

    Examples:

        deflectbench view

        deflectbench view --db paper.db --port 9000 --consensus all
    """
    from deflectbench.web import ViewApp, ViewIndex, WebServer, check_bind, store_opener

    check_bind(host or "127.0.0.1", explicit=host is not None)
    store = open_store(db, must_exist=True)
    # bind before reading the results: a busy port fails at once, not after a long read
    server = WebServer(None, host or "127.0.0.1", port, explicit=host is not None)
    try:
        benchmark = stored_benchmark(store, benchmark_name)
        with err.busy("reading the results…"):
            index = ViewIndex.build(store, benchmark, consensus)
    except BaseException:
        server.close()
        raise
    finally:
        store.close()
    server.app = ViewApp(store_opener(db, readonly=True), benchmark, index)
    console.print(f"{len(index.rows)} generations", highlight=False)
    _serve_with(server, "view")
