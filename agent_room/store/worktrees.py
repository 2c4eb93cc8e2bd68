"""The worktrees table: each agent's git worktree, its branch and the base it started from.

One row per agent name, kept after ``stop`` (the worktree stays for ``start``, ``enter``
and ``resume`` to reuse) and marked removed by ``stop --remove-worktree``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core.worktrees import Worktree
from agent_room.turn.store.db import write_transaction

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row, StoreBase

_COLUMNS = "name, repo, path, branch, base_branch, base_commit, created_at, removed_at"


def _worktree(row: Row) -> Worktree:
    return Worktree(
        name=str(row["name"]),
        repo=str(row["repo"]),
        path=str(row["path"]),
        branch=str(row["branch"]),
        base_branch=row["base_branch"],
        base_commit=str(row["base_commit"]),
        created_at=float(row["created_at"]),
        removed_at=row["removed_at"],
    )


def record(store: StoreBase, worktree: Worktree) -> None:
    """Remember (or replace) the agent's worktree."""
    with write_transaction(store.conn) as conn:
        conn.execute("DELETE FROM worktrees WHERE name = $1", (worktree.name,))
        conn.execute(
            f"INSERT INTO worktrees ({_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
            (
                worktree.name,
                worktree.repo,
                worktree.path,
                worktree.branch,
                worktree.base_branch,
                worktree.base_commit,
                worktree.created_at,
                worktree.removed_at,
            ),
        )


def of(store: StoreBase, name: str) -> Worktree | None:
    """The agent's worktree, unless it was removed."""
    row = store.conn.execute(
        f"SELECT {_COLUMNS} FROM worktrees WHERE name = $1 AND removed_at IS NULL", (name,)
    ).fetchone()
    return _worktree(dict(row)) if row else None


def live(store: StoreBase) -> dict[str, Worktree]:
    """Every worktree not removed, by agent name."""
    found = store.conn.execute(
        f"SELECT {_COLUMNS} FROM worktrees WHERE removed_at IS NULL ORDER BY name"
    ).fetchall()
    return {str(r["name"]): _worktree(dict(r)) for r in found}


def member_folders(store: StoreBase) -> dict[str, tuple[str, float, str]]:
    """Each member's state, last change and folder, by name, oldest first: what the code
    tracker reads its changes again by (``store.members`` also counts every inbox)."""
    found = store.conn.execute(
        "SELECT name, state, updated_at, cwd FROM sessions WHERE left_at IS NULL"
        " ORDER BY started_at, rowid"
    ).fetchall()
    return {str(r[0]): (str(r[1]), float(r[2]), str(r[3] or "")) for r in found}


def removed(store: StoreBase, name: str, *, at: float) -> None:
    """Mark the agent's worktree removed (its row stays for the record)."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "UPDATE worktrees SET removed_at = $1 WHERE name = $2 AND removed_at IS NULL",
            (at, name),
        )


def append_to_held(store: StoreBase, message_id: int, text: str) -> bool:
    """Add ``text`` to a handover's body while it is still held (before its release)."""
    with write_transaction(store.conn) as conn:
        updated = conn.execute(
            "UPDATE messages SET body = body || $1 WHERE id = $2 AND status = 'held'",
            ("\n\n" + text, message_id),
        )
        return bool(updated.rowcount)
