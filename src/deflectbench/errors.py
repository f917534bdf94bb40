"""Errors a user can fix, shared by every room: the CLI prints each as one line (exit 2)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


class ConfigError(ValueError):
    """A bad setting, model name or provider configuration; the message names it and what is
    allowed."""


def did_you_mean(value: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest known name, or nothing when none is close."""
    close = difflib.get_close_matches(value, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
