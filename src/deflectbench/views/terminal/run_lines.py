"""What ``run`` and ``judge`` print around their tables: a line per stage, why a stage gave
up, the closing account, the control's outcome and the self-consistency pass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from deflectbench.views.terminal.lines import Line, Shown, out, warn
from deflectbench.views.terminal.run_tables import estimate_view, framing_tables

if TYPE_CHECKING:
    from deflectbench.pipeline import StageResult
    from deflectbench.pipeline.self_consistency import Rejudged
    from deflectbench.results.judge import JudgeResult
    from deflectbench.results.run import RunResult

#: The hint under an incomplete account.
AGAIN = "run the same command again to continue; --retry-errors sends failed requests again"


def account(line: str, complete: bool) -> Shown:
    """The one line every run and judge ends with: done, or what is missing and why."""
    if complete:
        return [out(line)]
    return [warn(line), Line(AGAIN, "yellow", err=True, markup=True)]


def aborted(name: str, res: StageResult) -> Shown:
    if not res.aborted:
        return []
    return [
        warn(
            f"{name} stopped early: {res.aborted}. Fix the cause (API key, model name, base_url, "
            "quota) and run the same command: the failed cells are kept as error rows and "
            "--retry-errors sends them again.",
            "red",
        )
    ]


def stage(label: str, res: StageResult, what: str) -> Shown:
    line = f"{label}: {res.ok} {what}"
    if res.cached:
        line += f" ({res.cached} from the request cache)"
    if res.non_answers:
        line += ", no answer: " + ", ".join(f"{n} {k}" for k, n in sorted(res.non_answers.items()))
    if res.truncated:
        line += f", {res.truncated} cut at max_tokens"
    if res.parse_errors:
        line += f", {res.parse_errors} replies without a verdict"
    shown: Shown = [out(line)]
    for cause, n in sorted(res.errors_by_cause.items(), key=lambda kv: -kv[1]):
        example = res.error_examples.get(cause, "")
        shown.append(out(f"  {n} x {cause}: {example}"))
    if res.parse_errors and res.parse_error_example:
        shown.append(out(f"  first reply without a verdict: {res.parse_error_example}"))
    return shown


def judged(j: str, res: StageResult, after: str = "") -> Shown:
    return [
        *stage(f"judge {j}{after}", res, f"judged, {res.errors} errors"),
        *aborted(f"judge {j}", res),
    ]


def generated(label: str, res: StageResult, what: str) -> Shown:
    text = f"generated, {res.skipped} already stored, {res.errors} errors"
    return [*stage(label, res, text), *aborted(what, res)]


def run_report(result: RunResult) -> Shown:
    """After a run: each stage, the outcome by framing, what was spent, why it stopped, and
    where the results are."""
    r = result.report
    shown: Shown = []
    for m, res in r.generation.items():
        shown += generated(m, res, f"generation for {m}")
    for j, res in r.judging.items():
        shown += judged(j, res)
    for m, res in r.turns.generation.items():  # a multi-turn pack's turn 2
        shown += generated(f"{m} turn 2", res, f"turn 2 for {m}")
    for j, res in r.turns.judging.items():
        shown += judged(j, res, " after turn 2")
    shown += framing_tables(result.framing, result.plan.judges)
    if r.spent_usd:
        shown.append(out(f"spent: {r.spent_usd:,.4f} USD (priced requests of this run)"))
    if r.stop_reason == "budget":
        shown.append(
            Line(
                "[yellow]stopped at the --max-cost budget: what finished is stored; raise the "
                "budget and run the same command to continue[/]",
                markup=True,
            )
        )
    elif r.stopped_early:
        shown.append(
            Line("[yellow]stopped early: run the same command again to finish[/]", markup=True)
        )
    shown += [warn(line) for line in url_credentials_warnings(result.config.providers)]
    db = result.db
    shown.append(out(f"results: {db.resolve()}   (see `deflectbench status --db {db}`)"))
    return shown


def url_credentials_warnings(providers: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One warning per provider section whose base URL carries ``user:password@``: it goes
    out as a Basic header, and what servers send back is scrubbed of it in every form, but a
    key in ``api_key_env`` keeps it out of URLs altogether."""
    from deflectbench.secrets import url_credentials

    found = []
    for name, section in providers.items():
        urls = [section.get("base_url")]
        endpoints = section.get("endpoints")
        if isinstance(endpoints, list):
            urls += [e.get("base_url") for e in endpoints if isinstance(e, Mapping)]
        if any(isinstance(u, str) and url_credentials(u) for u in urls):
            found.append(
                f"warning: providers.{name}'s base_url carries user:password@ (sent as a Basic "
                "header); it was scrubbed, in every form, from all a server sent back, but a key "
                "in api_key_env keeps it out of URLs"
            )
    return found


def run_end(result: RunResult) -> Shown:
    """The account, then with ``control`` the control's line."""
    shown = account(result.account, result.complete)
    if result.control is not None:
        shown.append(out(result.control.line()))
    return shown


def judge_report(result: JudgeResult) -> Shown:
    """``judge``: the dry run's table, or each judge's stage, the self-consistency pass and
    the account."""
    if result.estimate is not None:
        return list(estimate_view(result.estimate))
    shown: Shown = []
    for j, res in result.results.items():
        shown += judged(j, res)
    for j, r in result.rejudged.items():
        shown += rejudged(j, r, result.seed, priced=j not in result.free)
    return shown + account(result.account, result.complete)


def rejudged(j: str, r: Rejudged, seed: int, *, priced: bool) -> Shown:
    """``judge --self-consistency``: one line per judge, and what the budget withheld."""
    line = f"self-consistency {j}: {r.sampled} answers in the sample (seed {seed}), "
    line += f"{r.sent} re-judged now" + (f", {r.failed} failed" if r.failed else "")
    if priced and r.sent:
        line += f", {r.cost_usd:.4f} USD" if r.cost_usd is not None else ", cost unknown"
    shown: Shown = [out(line)]
    if r.withheld:
        shown.append(
            warn(
                f"self-consistency {j}: {r.withheld} not sent (budget reached: {r.budget}); "
                "kept as not-sent rows, sent by the same command with a larger --max-cost"
            )
        )
    return shown


def counts(table: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in table.items())
