"""Fakes of the core's ports, shared by the tests of the console and the workers."""

from __future__ import annotations

from collections.abc import Callable, Sequence


class FakeMux:
    """The multiplexer port, recording what the console asks of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.panes_alive = True
        self.next_pane = "%77"

    def typing_refusal(
        self, socket: str | None, pane: str, agent_pid: int | None, agent_start: int | None
    ) -> str | None:
        return "the fake multiplexer types nothing"

    def type_line(
        self,
        socket: str | None,
        pane: str,
        text: str,
        *,
        settle: float,
        still_safe: Callable[[], bool] | None = None,
        clear: Sequence[str] = (),
    ) -> bool:
        self.calls.append(("type_line", socket, pane, text))
        return False

    def press_enter(self, socket: str | None, pane: str) -> None:
        self.calls.append(("press_enter", socket, pane))

    def capture(self, socket: str | None, pane: str) -> str:
        return ""

    def pane_exists(self, socket: str | None, pane: str) -> bool:
        return self.panes_alive

    def switch_client(self, socket: str | None, pane: str) -> None:
        self.calls.append(("switch_client", socket, pane))

    def attach(self, socket: str | None, pane: str) -> int:
        self.calls.append(("attach", socket, pane))
        return 0

    def detach_client(self, socket: str | None, tty: str) -> None:
        self.calls.append(("detach_client", socket, tty))

    def open_window(
        self, socket: str | None, cwd: str | None, argv: tuple[str, ...], *, name: str, inside: bool
    ) -> str:
        self.calls.append(("open_window", socket, cwd, argv, name, inside))
        return self.next_pane


class IdleMux:
    """The multiplexer port with every pane an idle agent: it types, and notes what."""

    def __init__(self, on_typed: Callable[[str, str], None] | None = None) -> None:
        self.typed: list[str] = []
        self.on_typed = on_typed
        """Called with the pane and the text, as each line is typed."""

    def typing_refusal(self, *_args: object) -> str | None:
        return None

    def type_line(self, _socket: str | None, pane: str, text: str, **_kw: object) -> bool:
        self.typed.append(text)
        if self.on_typed is not None:
            self.on_typed(pane, text)
        return True

    def press_enter(self, *_args: object) -> None:
        return None

    def capture(self, *_args: object) -> str:
        return ""

    def pane_exists(self, *_args: object) -> bool:
        return True
