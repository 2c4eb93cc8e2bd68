"""What the hooks and the sends apply: names, states, prompts, bodies, the loop rules.

Standard library only, like the rest of ``agent_room.turn``; the domain's typed models are
``agent_room.core``'s."""
