"""The dataset card of a Hugging Face folder: ``README.md`` with YAML front matter; the one
writer of cards (:func:`card`), for ``export --format hf`` and ``leaderboard --hf`` alike.

The front matter is what the Hub and ``datasets.load_dataset`` read: ``configs`` (which Parquet
files make which config and split), ``dataset_info`` (each config's features and row counts),
the license, and a ``deflectbench`` block naming the benchmark's version and sha256, which
``deflectbench import`` checks before it reads a row. The body says what a row is, every
column, which license covers what, and how to cite the paper. The YAML is written by hand
(plain keys, JSON-quoted strings, which YAML reads as they are), so no YAML library is needed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench import __version__
from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.title import pack_title
from deflectbench.interop.release import InteropError
from deflectbench.vocab import FIELDS, OUTCOMES

if TYPE_CHECKING:
    from deflectbench.analysis.compare.leaderboard import Leaderboard

CARD = "README.md"
ARXIV = "2608.26119"
CITATION = f"""@misc{{deflectbench,
  title         = {{DeflectBench}},
  year          = {{2026}},
  eprint        = {{{ARXIV}}},
  archivePrefix = {{arXiv}},
  url           = {{https://arxiv.org/abs/{ARXIV}}}
}}"""

#: What each column means (per-judge columns are ``<judge>__status`` and ``<judge>__<field>``).
COLUMNS: dict[str, str] = {
    "gen_id": "the generation's id in the store it was exported from",
    "judgment_id": "the verdict's id in the store it was exported from",
    "benchmark": "the benchmark's key, e.g. deflectbench-v1.0",
    "model": "the model that answered, as named in the run (provider/model)",
    "condition": "the settings it was sampled under (label; `release` for the paper's files)",
    "claim_id": "the claim, e.g. L3_US_02 (level, context, number)",
    "level": "controversy level 1-4",
    "level_name": "factually_true, consensus, contested or factually_false",
    "context": "us or international",
    "domain": "the claim's subject area",
    "text": "the claim's text",
    "prompt_id": "the prompt template",
    "prompt_num": "the template's number in the paper (1-15)",
    "framing": "direct, political, coach, manipulation, choose, implicit_neutral, implicit_political",
    "explicitness": "explicit or implicit request",
    "frame": "the template's frame as the release names it",
    "fallacy": "the fallacy the template asks for (whataboutism, ad_hominem, red_herring, "
    "model_choice or any)",
    "template": "the template's text with its placeholders",
    "fallacy_id": "the fallacy's id",
    "name": "the fallacy's name",
    "definition": "the definition the prompts quote",
    "sample": "the sample (run) number, 1-based",
    "prompt": "the exact user message sent",
    "response": "the model's reply (untrusted text: escape it wherever it is shown)",
    "error": "why the request failed (then response is empty); failed requests are not judged",
    "finish_reason": "stop, length (cut at max_tokens), or a non-answer: content_filter, refusal, "
    "empty (never judged, left out of the analysis)",
    "input_tokens": "tokens sent",
    "output_tokens": "tokens received",
    "latency_s": "seconds the request took",
    "cost_usd": "what the request cost, when a price was known",
    "params_json": "the request's sampling parameters (JSON)",
    "run_id": "the run that made it",
    "source": "run, or import when it came from files",
    "created_at": "when it was stored (UTC)",
    "extra_json": "fields of an imported record with no column of their own (JSON)",
    "judge": "the judge that gave the verdict",
    "raw": "the judge's raw reply",
    "reasoning": "the judge's reasoning",
    "parse_error": "1 when the judge's reply did not parse",
    "said_json": "the 8 fields as the judge said them (JSON)",
    "consistency_flag": "1 when the judge's values broke the rubric's rules",
    "scored": "true when the generation entered the analysis (a valid answer every judge parsed)",
    "n_judges": "judges combined in the consensus",
    "outcome": "the outcome by the paper's ladder: " + ", ".join(OUTCOMES),
}


def describe(column: str, config: str) -> str:
    """One line on what ``column`` holds in ``config``."""
    judge, sep, field = column.rpartition("__")
    if sep and field == "status":
        return f"judge {judge}: parsed, parse_error, request_error, or empty (not judged)"
    if sep and field in FIELDS:
        return f"judge {judge}: {field} as it said it (0/1; empty when not given)"
    if column in FIELDS:
        if config == "judgments":
            return f"{column} after the rubric's rules (0/1)"
        return f"consensus of the judges on {column} (0/1; empty when not scored)"
    return COLUMNS.get(column, "")


@dataclass(frozen=True)
class Config:
    """One config as the card declares it."""

    name: str
    split: str
    path: str
    features: list[tuple[str, str]]
    rows: int
    #: bytes of the Parquet file, and of the table in memory (Arrow), as the Hub counts them
    size: int
    nbytes: int
    row: str
    default: bool = False


def _q(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value)


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M" if n < 1_000_000 else "1M<n<10M"


def card(front: Sequence[str], body: Sequence[str]) -> str:
    """A card: the front matter's YAML lines between their fences, a blank line, the body."""
    return "\n".join(["---", *front, "---", "", *body])


def data_files(name: str, split: str, path: str) -> list[str]:
    """One ``configs`` entry of the front matter: a config and the file of its split (``path``
    as YAML writes it)."""
    return [f"- config_name: {name}", "  data_files:", f"  - split: {split}", f"    path: {path}"]


def front_matter(configs: Sequence[Config], b: Benchmark, what: str) -> str:
    """The YAML block (without its ``---`` fences)."""
    lines = [
        "license: cc-by-4.0",
        "language:",
        f"- {b.language.split('-')[0].lower()}",
        f"pretty_name: {_q(f'{pack_title(b)} {what}')}",
        "size_categories:",
        f"- {_size_category(max(c.rows for c in configs))}",
        "task_categories:",
        "- text-generation",
        "tags:",
        "- deflectbench",
        "- llm-evaluation",
        "- fallacies",
        "- refusal",
        "configs:",
    ]
    for c in configs:
        lines += data_files(c.name, c.split, _q(c.path))
        if c.default:
            lines.append("  default: true")
    lines.append("dataset_info:")
    for c in configs:
        lines += [f"- config_name: {c.name}", "  features:"]
        for name, dtype in c.features:
            lines += [f"  - name: {_q(name)}", f"    dtype: {dtype}"]
        lines += ["  splits:", f"  - name: {c.split}", f"    num_bytes: {c.nbytes}"]
        lines.append(f"    num_examples: {c.rows}")
        lines += [f"  download_size: {c.size}", f"  dataset_size: {c.nbytes}"]
    lines += [
        "deflectbench:",
        f"  kind: {what}",
        f"  benchmark: {_q(b.key)}",
        f"  benchmark_version: {_q(b.version)}",
        f"  benchmark_sha256: {_q(b.sha256)}",
        f"  deflectbench_version: {_q(__version__)}",
    ]
    return "\n".join(lines)


def card_text(configs: Sequence[Config], b: Benchmark, what: str) -> str:
    """The whole ``README.md``: front matter, then what a row is, the columns, license, citation."""
    title = f"{pack_title(b)}: " + ("results" if what == "results" else "the benchmark")
    first = configs[0].name
    if what == "results":
        intro = (
            "Generations and judge verdicts from a DeflectBench run (or the paper's imported "
            "release), exported with `deflectbench export --format hf`. `generations` has one row "
            "per generation: the claim's level, context and domain, the template's framing, "
            "explicitness and requested fallacy, the condition, each judge's 8 rubric fields as "
            "it said them, the judges' consensus and the outcome, as `deflectbench analyze` "
            "computes them (the paper's definition). `deflectbench import FOLDER` reads this "
            "folder back into a results store."
        )
    else:
        intro = (
            "The DeflectBench benchmark: claims at four controversy levels, prompt templates in "
            "seven framings, the fallacy definitions, and every claim x template rendered as the "
            "exact prompt sent (exported with `deflectbench export --format hf --what "
            "benchmark`)."
        )
    out = [
        f"# {title}",
        "",
        intro,
        "",
        f"Benchmark: `{b.key}` (version {b.version}), sha256 `{b.sha256}`.",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("path/to/this/folder", "{first}")  # or the Hub id once pushed',
        "```",
        "",
        "Nothing was uploaded: push the folder yourself, e.g. "
        "`huggingface-cli upload ORG/NAME path/to/this/folder --repo-type dataset`.",
        "",
        "## Configs",
        "",
        "| config | split | rows | a row is |",
        "|---|---|---|---|",
        *(f"| `{c.name}` | {c.split} | {c.rows:,} | {c.row} |" for c in configs),
    ]
    for c in configs:
        out += ["", f"### `{c.name}`", "", "| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{name}` | {dtype} | {describe(name, c.name)} |" for name, dtype in c.features]
    out += [
        "",
        "## License",
        "",
        "The benchmark's data (claims, templates, fallacy definitions, judge rubric, and the "
        "prompts rendered from them) are CC BY 4.0, as published with the paper "
        f"(arXiv {ARXIV}); this folder is released under the same license. The DeflectBench "
        "code that wrote it is Apache-2.0 and is not part of this folder.",
    ]
    if what == "results":
        out += [
            "Model replies and judge replies were written by the models named in the rows; "
            "check each provider's terms before you publish them.",
        ]
    out += ["", "## Citation", "", "```bibtex", CITATION, "```", ""]
    return card([front_matter(configs, b, what)], out)


def leaderboard_card(lb: Leaderboard, path: str = "leaderboard.csv") -> str:
    """The card of ``leaderboard --hf``: a config naming the board's CSV (``path``), and what
    its columns mean."""
    from deflectbench.analysis.compare.leaderboard import GROUPS_NOTE

    front = [*data_files("leaderboard", "train", path), "tags:", "- deflectbench", "- leaderboard"]
    body = [
        f"# DeflectBench leaderboard by {lb.name}",
        "",
        f"{len(lb.rows)} rows, one per model x condition x pack of the stores, written by "
        "`deflectbench leaderboard`. Rates are fractions. `ci95` is the 95% claim-block "
        f"bootstrap interval. {GROUPS_NOTE}. `judges_match` is false for a row judged by "
        "other judges than the board's. `share_<outcome>` is the row's compliance signature.",
        "",
    ]
    notes = [f"- {n}" for n in lb.notes]
    return card(["configs:", *front], body + ([*notes, ""] if notes else []))


def read_card(path: Path) -> dict[str, Any] | None:
    """The card's ``deflectbench`` block (kind, benchmark, benchmark_sha256, ...), or None when
    the file is not a DeflectBench card."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InteropError(f"{path}: cannot read the dataset card ({exc})") from None
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (x.strip() for x in lines[1:]):
        return None
    end = next(i for i, x in enumerate(lines[1:], start=1) if x.strip() == "---")
    block: dict[str, Any] | None = None
    for line in lines[1:end]:
        if block is None:
            if line.rstrip() == "deflectbench:":
                block = {}
            continue
        if not line.startswith("  "):
            break
        key, _, value = line.strip().partition(":")
        value = value.strip()
        try:
            block[key] = json.loads(value) if value.startswith('"') else value
        except json.JSONDecodeError:
            raise InteropError(f"{path}: bad value for {key} in the card's front matter") from None
    return block
