"""Where the CLI prints: results to stdout, progress and errors to stderr."""

from __future__ import annotations

from rich.console import Console

console = Console(soft_wrap=True, emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)


class UserError(Exception):
    """An error the user can fix; printed as one line."""
