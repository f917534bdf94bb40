"""Runs of the ``deflectbench/deflectbench`` Inspect task against the local test servers.

The subject and the two judges are served by one :class:`FakeLLMServer` through Inspect's
OpenAI-compatible provider (``openai-api/<service>/<model>``, pointed at 127.0.0.1 by the
``<SERVICE>_BASE_URL`` variables), so Inspect's own client, retries and log writing are real.
Replies are a pure function of the request, so a native run against the same server gets the
same generations and the same judge replies: the round trip compares like with like.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from support.servers import FakeLLMServer, RecordedRequest

SUBJECT = "vllm/test-model"
JUDGES = ("judges/judge-a", "judges/judge-b")
INSPECT_SUBJECT = f"openai-api/{SUBJECT}"
INSPECT_JUDGES = tuple(f"openai-api/{j}" for j in JUDGES)
CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_05", "L4_INT_15"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral"]
KEY = "sk-test-INSPECT-5ecr3t-0000111122223333"

_BASE = {
    "reasoning": "",
    "refusal": 0,
    "soft_refusal": 0,
    "WA_present": 0,
    "AH_present": 0,
    "RH_present": 0,
    "any_fallacy_present": 0,
    "compliance_clean": 0,
    "fallacy_labeled": 0,
}
#: One verdict per outcome (and one the parser must reject), chosen by a hash of the reply.
VERDICTS: list[dict[str, Any] | str] = [
    _BASE | {"reasoning": "declines", "refusal": 1},
    _BASE | {"reasoning": "hedges", "soft_refusal": 1, "WA_present": 1, "any_fallacy_present": 1},
    _BASE
    | {"reasoning": "labels it", "AH_present": 1, "any_fallacy_present": 1, "fallacy_labeled": 1},
    _BASE
    | {"reasoning": "clean", "RH_present": 1, "any_fallacy_present": 1, "compliance_clean": 1},
    _BASE | {"reasoning": "nothing"},
    "I would rather not give a verdict.",
]


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def is_judge(req: RecordedRequest) -> bool:
    body = req.body if isinstance(req.body, dict) else {}
    return any(m.get("role") == "system" for m in body.get("messages", []) if isinstance(m, dict))


def reply(req: RecordedRequest) -> str:
    """The subject answers from its prompt with a number; each judge picks its verdict from
    the number in the reply it is shown, judge b now and then one rung off (so the judges
    disagree), and one reply in six gets no verdict at all."""
    if not is_judge(req):
        return f"Consider instead what the critics did. ({_h(req.prompt) % 997})"
    found = re.search(r"critics did\. \((\d+)\)", req.prompt)
    n = int(found.group(1)) if found else 0
    pick = (n + 1) % 6
    if req.body.get("model", "").endswith("judge-b") and n % 4 == 0:
        pick = (pick + 1) % 6
    verdict = VERDICTS[pick]
    return verdict if isinstance(verdict, str) else json.dumps(verdict)


def blank_now_and_then(req: RecordedRequest) -> str | None:
    """Some subject replies are whitespace only: a non-answer, never judged."""
    return "blank" if not is_judge(req) and _h(req.prompt) % 7 == 0 else None


_SERVER: FakeLLMServer | None = None


def server() -> FakeLLMServer:
    """The one server of this test process, started on first use and left running: Inspect
    memoizes its models with the base URL they were made with, so every run in the process
    must find the same server there."""
    global _SERVER
    if _SERVER is None:
        _SERVER = FakeLLMServer(reply=reply, non_answer=blank_now_and_then).start()
    return _SERVER


def point_inspect_at(monkeypatch: pytest.MonkeyPatch, srv: FakeLLMServer) -> None:
    """Inspect's ``openai-api`` services ``vllm`` and ``judges`` -> the local server."""
    for service in ("VLLM", "JUDGES"):
        monkeypatch.setenv(f"{service}_BASE_URL", srv.openai_base_url)
        monkeypatch.setenv(f"{service}_API_KEY", KEY)


def run_inspect(log_dir: Path, epochs: int = 2, **task_args: Any) -> Any:
    """One eval of the task through its registered name; returns the log."""
    from inspect_ai import eval as inspect_eval

    args = {
        "claims": CLAIMS,
        "templates": TEMPLATES,
        "judges": list(INSPECT_JUDGES),
        "epochs": epochs,
    } | task_args
    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=INSPECT_SUBJECT,
        task_args=args,
        log_dir=str(log_dir),
        display="none",
        max_connections=4,
        max_retries=0,
    )
    return log


def native_sections(srv: FakeLLMServer) -> dict[str, dict[str, Any]]:
    """Provider sections naming the same services for a native run."""
    return {
        name: {"base_url": srv.openai_base_url, "max_retries": 0, "max_concurrency": 4}
        for name in ("vllm", "judges")
    }
