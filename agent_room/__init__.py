"""agent-room: a control room for many AI coding agents.

This module imports nothing heavy: hooks and ``--help`` start from here on every
turn of every agent, so the package root stays on the standard library.
"""

__version__ = "0.1.0"
