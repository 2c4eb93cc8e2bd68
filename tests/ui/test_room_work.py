"""``RoomWork``, the console's one way to do blocking room work: the job runs in a thread
worker on its own connection, its message reaches the node it is meant for, a
``RoomError`` becomes an error toast for the app, the connection is closed whatever
happened, and a job that changed the room asks for a re-read."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

from agent_room.room.service import Room
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui.messages import Notice, RefreshWanted
from agent_room.ui.room_work import RoomWork
from tests.ui.conftest import until

pytestmark = pytest.mark.anyio


class Found(Message):
    """What a job found."""

    def __init__(self, members: int) -> None:
        self.members = members
        super().__init__()


class Panel(Static):
    """A widget a job's result is meant for."""

    def __init__(self) -> None:
        super().__init__(id="panel")
        self.found: list[int] = []

    def on_found(self, message: Found) -> None:
        self.found.append(message.members)


class Host(App[int]):
    """The smallest app that owns a ``RoomWork``."""

    def __init__(self, home: Path) -> None:
        super().__init__()
        self.home = home
        self.opened: list[CountedRoom] = []
        self.work = RoomWork(self, self._open)

    def _open(self) -> Room:
        room = CountedRoom(SqliteStore(self.home))
        self.opened.append(room)
        return room

    def compose(self) -> ComposeResult:
        yield Panel()


class CountedRoom(Room):
    """A real room that remembers being closed (on either engine)."""

    closed = False

    def close(self) -> None:
        self.closed = True
        super().close()


def _closed(room: CountedRoom) -> bool:
    return room.closed


async def test_a_jobs_message_reaches_its_node_and_the_connection_is_closed(
    room_home: Path,
) -> None:
    app = Host(room_home)
    seen: list[Message] = []
    async with app.run_test(message_hook=seen.append) as pilot:
        panel = app.query_one(Panel)
        app.work.run(lambda room: Found(len(room.store.members())), group="t", to=panel)
        await until(pilot, lambda: panel.found == [0])
        await app.workers.wait_for_complete()
        assert len(app.opened) == 1
        assert _closed(app.opened[0])
        assert not any(isinstance(m, RefreshWanted) for m in seen)  # nothing changed


async def test_a_room_error_is_an_error_toast_and_the_room_is_read_again(
    room_home: Path,
) -> None:
    app = Host(room_home)
    seen: list[Message] = []
    async with app.run_test(message_hook=seen.append) as pilot:
        panel = app.query_one(Panel)
        app.work.run(
            lambda room: Found(len(room.rename("nobody", "somebody"))),
            group="t",
            to=panel,
            refresh=True,
            failed="rename failed: {}",
        )
        await until(pilot, lambda: any(isinstance(m, RefreshWanted) for m in seen))
        notices = [m for m in seen if isinstance(m, Notice)]
        assert len(notices) == 1
        assert notices[0].severity == "error"
        assert notices[0].text.startswith("rename failed: ")
        assert "nobody" in notices[0].text
        assert panel.found == []
        assert _closed(app.opened[0])


async def test_read_closes_the_connection_when_the_job_fails(room_home: Path) -> None:
    app = Host(room_home)
    async with app.run_test():

        def fails(room: Room) -> None:
            raise ValueError("a bug in the job")

        with pytest.raises(ValueError, match="a bug"):
            app.work.read(fails)
        assert _closed(app.opened[0])
