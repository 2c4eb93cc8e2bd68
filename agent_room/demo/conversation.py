"""Scripted conversations for the model stand-in."""

from agent_room.demo.model_api import Script

SCRIPTS = {"demo": Script}
