"""``HelpScreen``: what each key does and how entering an agent comes back (``?``)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# agent-room console

| key | what it does |
|---|---|
| `Enter` / `e` | enter the selected session: its tmux pane (an ended one resumes) |
| `n` | rename the selected session (its unread messages, timers and links follow) |
| `c` | the selected session's checkpoints: `f` / `p` resume one as a new agent (full / last 50) |
| `d` | what each agent changed (branch, files, +/- lines) and a file's diff |
| `/` | filter the sessions (words match name, agent, state, cwd, pane) · `Esc` clears |
| `s` / `S` | sort the sessions by the next column / reverse the order |
| `w` | write to the selected agent as `@operator` (delivered like any message) |
| `i` | the messages agents wrote to `@operator`: Enter answers one |
| `$` | what the agents spent: cost over time and by agent, model, link or day (`b`, `t`) |
| `a` | approve the highlighted handover |
| `r` | reject the highlighted handover (asks for the reason the sender receives) |
| `Tab` | move between sessions, tree, handovers and flow |
| `Ctrl+P` | command palette: every action, every theme |
| `?` | this help · `q` quits |

**Coming back.** Inside tmux, Enter switches your client to the agent's pane: return with
tmux's *last session* key (`prefix` `L`) or `agent-room exit-agent` in that pane. Outside
tmux the console suspends and attaches; detach (`prefix` `d`) or run `agent-room
exit-agent` in that pane to come back.

**Badges.** `⚠ cycle` marks a handover that would close a loop (A → B → … → A) over the
recent handovers: approving it hands the work back around.

The delivery worker and the room watcher run inside the console; their state is in the
status bar. A worker that fails shows a notification and starts again.
"""


class HelpScreen(ModalScreen[None]):
    """The keys and what they do."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss(None)", "Close")
    ]

    def compose(self) -> ComposeResult:
        """The help text."""
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
