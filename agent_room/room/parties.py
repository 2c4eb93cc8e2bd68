"""The room's own parties and its plain message kind, as names.

A module of their own, with no imports, so that ``Room`` (``room.service``) and the
sub-services it calls (links, memory settings, crossings, loops) share them without
importing one another: the room imports its sub-services, never the other way round.
"""

CHAT = "chat"
"""``MessageKind.CHAT``, spelled out: ``agent-room send`` starts every delivery and must
not load ``enum`` for it (a test holds the two equal). The handover rules, which do,
load when a handover is handled."""
OPERATOR = "operator"
"""The person at the console: a named party of the room with no session."""
ROOM = "room"
"""The room itself, as the sender of its notices and the author of what it decides."""
