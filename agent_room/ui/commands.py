"""``RoomCommands``: the command palette's provider, offering every console action.

Each entry names an action of the app or the main screen, so the palette, the keys and
the footer can never disagree about what exists. Themes are offered by name too.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from agent_room.ui.columns import SORT_KEYS

ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Approve the highlighted handover", "app.approve", "a"),
    ("Reject the highlighted handover…", "app.reject", "r"),
    ("Write to the selected agent as @operator…", "app.write", "w"),
    ("Messages for you (@operator)…", "app.operator_inbox", "i"),
    ("Enter the selected session", "screen.enter_session", "e / Enter"),
    ("Rename the selected session…", "screen.rename_session", "n"),
    ("Checkpoints of the selected session…", "screen.checkpoints", "c"),
    ("Entity conflicts…", "screen.entity_conflicts", ""),
    ("Usage: tokens and cost over time…", "screen.usage", "$"),
    ("Changes: what each agent changed, a file's diff", "app.changes", "d"),
    ("Filter sessions", "screen.filter", "/"),
    ("Clear the session filter", "screen.clear_filter", "Esc"),
    ("Reverse the session order", "app.reverse_sort", "S"),
    ("Focus the sessions", "app.focus_panel('sessions')", ""),
    ("Focus the session tree", "app.focus_panel('tree')", ""),
    ("Focus the handover queue", "app.focus_panel('queue')", ""),
    ("Focus the message flow", "app.focus_panel('flow')", ""),
    ("Read the room again now", "app.reread", ""),
    ("Restart the background workers", "app.restart_workers", ""),
    ("Help: keys and how to come back", "app.help", "?"),
    ("Quit", "app.quit", "q"),
)
"""(title, action, key) of every console action."""


@runtime_checkable
class OffersThemes(Protocol):
    """An app that says which of its themes the palette offers (the console does)."""

    @property
    def offered_themes(self) -> list[str]:
        """Theme names, in the order offered."""
        ...


class RoomCommands(Provider):
    """Every console action, sort order and theme."""

    def _commands(self) -> list[tuple[str, str, str]]:
        found = list(ACTIONS)
        found += [(f"Sort sessions by {key}", f"app.sort_by('{key}')", "s") for key in SORT_KEYS]
        if isinstance(self.app, OffersThemes):
            found += [
                (f"Theme: {name}", f"app.use_theme('{name}')", "")
                for name in self.app.offered_themes
            ]
        return found

    def _run(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action)

    async def discover(self) -> Hits:
        """Everything, before anything is typed."""
        for title, action, key in self._commands():
            yield DiscoveryHit(title, partial(self._run, action), help=key or None)

    async def search(self, query: str) -> Hits:
        """Fuzzy matches."""
        matcher = self.matcher(query)
        for title, action, key in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=key)
