"""An agent over its budget, as the turn path says it (the usage rules are
``agent_room.core.usage``'s, which reads these two from here)."""

ROOM_BUDGET = "*room*"
"""A budget's scope for the whole room (never a name: names have no ``*``)."""


def over_text(name: str, scope: str) -> str:
    """Why an agent's prompts wait: what ``who``, the console and a sender read."""
    whose = "the room's budget" if scope == ROOM_BUDGET else "its budget"
    return f"@{name} is over {whose}: the room holds its prompts until the operator raises it"
