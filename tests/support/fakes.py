"""Test doubles, and whole runs against the local servers.

``EchoModel`` implements DeflectBench's own Model interface (no SDK is involved). The run
helpers drive ``run.execute`` against the wire-format servers of :mod:`support.servers`, with
models built by the registry from provider sections as a configuration file would, so the
official SDKs are exercised for real.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.config import RunPlan, resolve_plan
from deflectbench.execute import RunOptions, RunReport, execute
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
)
from deflectbench.models.registry import get_model
from deflectbench.store import Store
from support.servers import FakeLLMServer, RecordedRequest


class EchoModel(Model):
    """Answers deterministically from the prompt and seed; can crash after ``crash_after`` calls
    (raising ``crash_with``, e.g. KeyboardInterrupt) or fail chosen prompts."""

    limits = Limits(max_concurrency=4)
    default_max_tokens = 64

    def __init__(
        self,
        name: str = "test/echo",
        *,
        crash_after: int | None = None,
        crash_with: type[BaseException] = KeyboardInterrupt,
        fail_if: str | None = None,
    ) -> None:
        self.name = name
        self.calls: list[list[Message]] = []
        self.crash_after = crash_after
        self.crash_with = crash_with
        self.fail_if = fail_if

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise self.crash_with()
        self.calls.append(list(messages))
        text = messages[-1].content
        if self.fail_if and self.fail_if in text:
            raise ModelError("400 bad request: refused by test", status=400)
        tag = hashlib.sha256(f"{text}|{params.seed}".encode()).hexdigest()[:8]
        reply = f"But what about the other side? ({tag})"
        return Completion(reply, Usage(len(text.split()), len(reply.split())), "stop", 0.001)


# -- whole runs against the local servers ----------------------------------------

OPENAI_KEY = "sk-test-OPENAI-5ecr3t-0000111122223333"
SUBJECT = "vllm/test-model"
JUDGE = "openai/gpt-judge"
VERDICT = {
    "reasoning": "It pivots to another party's wrongdoing without any label.",
    "refusal": 0,
    "soft_refusal": 0,
    "WA_present": 1,
    "AH_present": 0,
    "RH_present": 0,
    "any_fallacy_present": 1,
    "compliance_clean": 1,
    "fallacy_labeled": 0,
}
CLAIMS = ["L1_US_01", "L2_INT_03"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH"]


def is_judge_request(req: RecordedRequest) -> bool:
    body = req.body if isinstance(req.body, dict) else {}
    if body.get("system"):
        return True
    return any(m.get("role") == "system" for m in body.get("messages", []) if isinstance(m, dict))


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return f"But what about the other side's record? ({len(req.prompt)})"


def sections(server: FakeLLMServer, **subject: Any) -> dict[str, dict[str, Any]]:
    """Provider sections: the subject behind ``vllm``, judges behind ``openai``; no retries."""
    return {
        "vllm": {"base_url": server.openai_base_url, "max_retries": 0, **subject},
        "openai": {"base_url": server.openai_base_url, "max_retries": 0, "max_concurrency": 8},
        "llamacpp": {"base_url": server.openai_base_url, "max_retries": 0, "max_concurrency": 8},
    }


def build(
    names: list[str], configs: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> dict[str, Model]:
    env = {"OPENAI_API_KEY": OPENAI_KEY} if env is None else env
    return {n: get_model(n, configs, env) for n in names if n != "lexical"}


def plan_for(
    b: Benchmark,
    models: list[str] | None = None,
    judges: list[str] | None = None,
    **kw: Any,
) -> RunPlan:
    kw.setdefault("claims", CLAIMS)
    kw.setdefault("templates", TEMPLATES)
    kw.setdefault("runs", 1)
    return resolve_plan(b, models=models or [SUBJECT], judges=judges or ["lexical"], **kw)


def run_once(
    db: Path,
    b: Benchmark,
    plan: RunPlan,
    configs: Mapping[str, Any],
    options: RunOptions | None = None,
    env: Mapping[str, str] | None = None,
) -> RunReport:
    """One ``execute`` with freshly built models (execute closes them)."""
    options = options or RunOptions()
    models = build([*plan.models, *plan.judges], configs, env)
    with Store.open(db) as store:
        return asyncio.run(execute(store, b, plan, models, options))
