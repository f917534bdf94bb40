"""The bodies the fake servers answer with, in each wire's own shape (OpenAI chat completions,
Anthropic Messages): replies, non-answers and errors.

Kept apart from :mod:`support.servers`, which decides *which* answer a request gets (faults,
limits, latency): this module only says what that answer looks like on the wire.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

Wire = Literal["openai", "anthropic"]

#: A 200 that is no answer. ``content_filter``: the provider's filter stopped it (OpenAI
#: ``finish_reason: content_filter``, no content); ``refusal``: OpenAI's ``message.refusal``,
#: Anthropic's ``stop_reason: refusal``; ``null``: content null (OpenAI) or no blocks
#: (Anthropic); ``blank``: whitespace only.
NonAnswer = Literal["content_filter", "refusal", "null", "blank"]
REFUSAL_TEXT = "I can't help with that."

_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def last_user_prompt(body: Any) -> str:
    """The text of a request body's last user message ("" if none)."""
    if not isinstance(body, dict):
        return ""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _count_tokens(text: str) -> int:
    return len(text.split())


def _anthropic_message(
    n: int, body: dict[str, Any], content: list[dict[str, Any]], stop: str, tokens_in: int, out: int
) -> dict[str, Any]:
    """A Messages API reply body (the ``n``th reply, to the request ``body``)."""
    return {
        "id": f"msg_{n:08d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "unknown"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": out},
    }


def _chat_completion(
    n: int,
    body: dict[str, Any],
    message: dict[str, Any],
    finish_reason: str,
    tokens_in: int,
    out: int,
    **extra: Any,
) -> dict[str, Any]:
    """A chat completion body with one choice (the ``n``th reply, to the request ``body``)."""
    return {
        "id": f"chatcmpl-{n:08d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "unknown"),
        **extra,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": out,
            "total_tokens": tokens_in + out,
        },
    }


def reply_body(n: int, wire: Wire, body: dict[str, Any], text: str) -> dict[str, Any]:
    """The ``n``th reply, ``text``, to the request ``body``: cut at its token cap (one token a
    word), and on Anthropic's wire the forced tool's input when a tool was forced."""
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    words = text.split()
    truncated = isinstance(limit, int) and len(words) > limit
    if truncated:
        text = " ".join(words[:limit])
    prompt_tokens = sum(
        _count_tokens(_text_of(m.get("content")))
        for m in body.get("messages") or []
        if isinstance(m, dict)
    ) + _count_tokens(_text_of(body.get("system")))
    completion_tokens = _count_tokens(text)
    if wire == "anthropic":
        tool_choice = body.get("tool_choice") or {}
        if tool_choice.get("type") == "tool":
            try:
                tool_input = json.loads(text)
            except ValueError:
                tool_input = None
            if not isinstance(tool_input, dict):
                tool_input = {"reply": text}
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{n:08d}",
                    "name": tool_choice.get("name"),
                    "input": tool_input,
                }
            ]
            stop_reason = "max_tokens" if truncated else "tool_use"
        else:
            content = [{"type": "text", "text": text}]
            stop_reason = "max_tokens" if truncated else "end_turn"
        return _anthropic_message(n, body, content, stop_reason, prompt_tokens, completion_tokens)
    return _chat_completion(
        n,
        body,
        {"role": "assistant", "content": text, "refusal": None},
        "length" if truncated else "stop",
        prompt_tokens,
        completion_tokens,
        system_fingerprint="fp_local",
    )


def non_answer_body(n: int, wire: Wire, body: dict[str, Any], kind: NonAnswer) -> dict[str, Any]:
    """The ``n``th reply to ``body``, a 200 that is no answer (see :data:`NonAnswer`)."""
    if wire == "anthropic":
        content = [{"type": "text", "text": "   \n"}] if kind == "blank" else []
        stop = "refusal" if kind in ("refusal", "content_filter") else "end_turn"
        return _anthropic_message(n, body, content, stop, 5, 0)
    message = {
        "role": "assistant",
        "content": "   \n" if kind == "blank" else None,
        "refusal": REFUSAL_TEXT if kind == "refusal" else None,
    }
    reason = "content_filter" if kind == "content_filter" else "stop"
    return _chat_completion(n, body, message, reason, 5, 0)


def error_for(wire: Wire, status: int, message: str, code: str | None) -> dict[str, Any]:
    """The wire's error body for ``status``; ``code`` overrides the error code (OpenAI
    ``error.code``, Anthropic ``error.details``)."""
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        error: dict[str, Any] = {"type": kind, "message": message}
        if code is not None:
            error["details"] = {"error_code": code}
        return {"type": "error", "error": error, "request_id": "req_local"}
    kind, default_code = _OPENAI_ERROR_TYPES.get(status, ("server_error", None))
    return {
        "error": {"message": message, "type": kind, "param": None, "code": code or default_code}
    }
