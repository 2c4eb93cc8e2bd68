"""Nothing runs away on a link between two real Claude Code agents, on every transport."""

from __future__ import annotations

import pytest

from agent_room.demo.model_api import Reply, Script
from tests.real.conftest import TURN, RealRoom
from tests.runaway import (
    ASK,
    TRANSPORTS,
    check_bounded,
    link_opened,
    record,
    set_transport,
    watch_link,
)

CHATTY = Reply("One more angle on the task list: it needs a due date too (n-17).")
"""What both models answer to anything: never an acknowledgement, always something new."""


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_link_between_two_unanchored_agents_stays_bounded(
    real: RealRoom, script: Script, transport: str
) -> None:
    script.add("LINK-OPEN", Reply("Asking.", bash=f'agent-room send @worker "{ASK}" --link'))
    script.add("", CHATTY)
    set_transport(real, transport)
    real.start("lead", "worker")
    real.type("lead", "LINK-OPEN: ask worker what the list needs")
    real.wait(lambda: link_opened(real), TURN, "lead", "worker")
    tally = watch_link(real, lambda: len(real.api.requests))
    record("claude", transport, tally)
    check_bounded(tally)
