"""Errors a user can fix, shared by every room: the CLI prints each as one line (exit 2)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A bad setting, model name or provider configuration; the message names it and what is
    allowed."""
