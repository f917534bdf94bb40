"""The store's register of conditions: per model, each set of settings and its one label."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from deflectbench.conditions import ConditionError, Settings, check_label, differences
from deflectbench.records import now_iso


class Conditions:
    """Condition queries over a store's connection (mixed into :class:`Store`)."""

    conn: sqlite3.Connection

    def register_condition(self, model: str, settings: Settings, label: str | None = None) -> str:
        """The label of ``settings`` for ``model``, registering it if new.

        Within one model a label names one set of settings and back: a label already used with
        other settings, or settings already stored under another label, are refused loudly
        (ConditionError) rather than mixed or re-sampled."""
        label, stored = self.checked_condition(model, settings, label)
        if not stored:
            self.conn.execute(
                "INSERT INTO conditions VALUES (?, ?, ?, ?, ?)",
                (
                    model,
                    label,
                    json.dumps(settings.as_json(), sort_keys=True),
                    settings.sha256,
                    now_iso(),
                ),
            )
        return label

    def checked_condition(
        self, model: str, settings: Settings, label: str | None = None
    ) -> tuple[str, bool]:
        """The label :meth:`register_condition` gives ``settings`` and whether it is stored
        already, refused as it refuses (ConditionError), writing nothing: the dry run's check."""
        wanted = settings.as_json()
        sha = settings.sha256
        label = check_label(label) if label is not None else settings.label()
        by_sha = self.conn.execute(
            "SELECT label FROM conditions WHERE model = ? AND settings_sha256 = ?", (model, sha)
        ).fetchone()
        if by_sha is not None and by_sha[0] != label:
            # leaving --label out resumes only a condition stored under the derived label
            or_default = " (or leave --label out)" if by_sha[0] == settings.label() else ""
            raise ConditionError(
                f"{model}: these settings are already stored as condition {by_sha[0]!r}; "
                f"pass --label {by_sha[0]}{or_default} to resume it"
            )
        by_label = self.conn.execute(
            "SELECT settings_json FROM conditions WHERE model = ? AND label = ?", (model, label)
        ).fetchone()
        if by_label is not None:
            stored = json.loads(by_label[0])
            if stored != wanted:
                raise ConditionError(
                    f"{model}: condition {label!r} was run with other settings "
                    f"({differences(stored, wanted)}); pass another --label to store these "
                    "beside it"
                )
            return label, True
        return label, False

    def conditions(self) -> list[dict[str, Any]]:
        """Every condition: model, label, settings, created_at."""
        return [
            {
                "model": r[0],
                "label": r[1],
                "settings": json.loads(r[2]),
                "created_at": r[3],
            }
            for r in self.conn.execute(
                "SELECT model, label, settings_json, created_at FROM conditions "
                "ORDER BY model, created_at"
            )
        ]
