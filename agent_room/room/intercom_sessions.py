"""The intercom's sessions as the operator manages them: the listing with cost totals,
forgetting, and taking over the sessions of the seed's state file.

Asking lives in ``room.intercom``; this module only reads and changes what is kept.
"""

from __future__ import annotations

import os
from typing import Any

from agent_room.core.intercom import OPERATOR_PARENT, IntercomSession
from agent_room.room.intercom import AskFailed, Intercom
from agent_room.turn.core.errors import BadInput, NotFound
from agent_room.turn.core.names import name_from_cwd


def listing(intercom: Intercom) -> list[dict[str, Any]]:
    """Per repository: its sessions (most recent first) and their cost and turns."""
    by_repo: dict[str, dict[str, Any]] = {}
    for row in intercom.store.sessions():
        entry = by_repo.setdefault(
            row["repo"],
            {"repo": row["repo"], "label": row["label"], "cost_usd": 0.0, "turns": 0},
        )
        entry["cost_usd"] = round(entry["cost_usd"] + float(row["cost_usd"]), 6)
        entry["turns"] += int(row["turns"])
        kept = {k: v for k, v in row.items() if k != "claimed_until"}
        entry.setdefault("sessions", []).append(kept)
    return sorted(by_repo.values(), key=lambda e: str(e["repo"]))


def forget(intercom: Intercom, target: str) -> list[str]:
    """Forget one session by id, or every session of a repository; the ids forgotten."""
    store = intercom.store
    if store.session(target) is not None:
        ids = [target]
    else:
        try:
            repo, _label = intercom.repository(target)
        except BadInput:
            repo = os.path.realpath(target)
        ids = [str(r["session_id"]) for r in store.sessions(repo)]
        if not ids:
            raise NotFound(f"no intercom session {target}, nor any for that repository")
    gone = store.forget(ids, at=intercom.room.clock(), by=OPERATOR_PARENT, why="forgotten")
    if not gone:
        raise AskFailed(f"{target}: its sessions are in use by an ask right now")
    return gone


def import_sessions(intercom: Intercom, sessions: list[IntercomSession]) -> int:
    """Keep sessions of the seed's state file; how many were new to the room."""
    rows = [
        {
            "session_id": s.session_id,
            "repo": s.repo,
            "label": name_from_cwd(s.repo),
            "topic": s.topic,
            "created_at": s.created_at,
            "last_used_at": s.last_used_at,
            "parent": s.parent,
            "asker": s.parent,
            "message_count": s.message_count,
            "last_message": s.last_message,
            "cost_usd": s.cost_usd,
            "turns": s.turns,
            "status": "inactive",
        }
        for s in sessions
    ]
    return intercom.store.import_sessions(rows, at=intercom.room.clock(), by=OPERATOR_PARENT)
