"""Keep credentials out of everything DeflectBench writes or prints.

Each provider already redacts its own key from its errors; this is the second wall: any text
about to be stored or shown (error messages above all, which servers sometimes fill with the
key they were sent) is scrubbed of the values of every credential-like environment variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_CREDENTIAL_NAME = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
#: Shorter values would scrub ordinary words; real keys are far longer.
_MIN_SECRET_LENGTH = 8
REDACTED = "[redacted]"


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    values = {
        v for k, v in env.items() if _CREDENTIAL_NAME.search(k) and len(v) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def scrub(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential from the environment replaced by ``[redacted]``."""
    for value in secret_values(env):
        if value in text:
            text = text.replace(value, REDACTED)
    return text
