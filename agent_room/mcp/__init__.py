"""The room's tools for agents over the Model Context Protocol.

An agent calls ``send_message``, ``read_inbox``, ``who``, ``get_session_data``,
``set_timer`` and ``ask`` as tools of a server that is already running, instead of
starting an ``agent-room`` process through its shell for each. The tools are thin: each
calls the room service the command line calls (``agent_room.room``), so the checks, the
errors and the audit are the same. Who calls is never an argument: it is the session the
server serves, known from a per-session secret (HTTP, ``tokens``) or from the agent's
environment (``agent-room mcp`` on stdio).
"""
