"""Nothing runs away on a link between two real Codex (or Gemini) agents, on every
transport: the scenario of ``tests/real/test_runaway_real.py`` (``tests.runaway``)."""

from __future__ import annotations

import pytest

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import TURN, ClientRoom
from tests.runaway import (
    ASK,
    TRANSPORTS,
    check_bounded,
    link_opened,
    record,
    set_transport,
    watch_link,
)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_link_between_two_unanchored_agents_stays_bounded(
    clients: ClientRoom, standin: StandIn, kind: str, transport: str
) -> None:
    """The stand-in answers everything with something new (``PONG: ...``)."""
    set_transport(clients, transport)
    clients.start("lead", kind)
    clients.start("worker", kind)
    clients.type("worker", "say hello")  # in the room from its first prompt
    clients.wait(lambda: clients.member("worker").get("state") == "idle", TURN, "worker")
    # (no @ before the name: Gemini CLI reads @NAME in a prompt as a file to attach)
    clients.type("lead", f'RUNSHELL: agent-room send worker "{ASK}" --link')
    clients.wait(lambda: link_opened(clients), TURN, "lead", "worker")
    delivered = transport != "native"  # no socket: native only holds them all, and says so
    tally = watch_link(clients, lambda: len(standin.requests), stops=delivered)
    record(kind, transport, tally)
    check_bounded(tally, delivered=delivered)
    if not delivered:
        assert "native delivery only" in str(clients.member("worker").get("delivery"))
