"""``python -m agent_room`` runs the command line."""

from agent_room.cli import main

raise SystemExit(main())
