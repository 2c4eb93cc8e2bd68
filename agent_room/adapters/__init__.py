"""Adapters to the outside world: tmux, processes, file watching, the agent CLIs.

Each implements a small ``Protocol`` declared in ``agent_room.core.ports`` so the room
service and the workers can be tested with fakes.
"""
