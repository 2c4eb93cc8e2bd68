"""Models' prices: the ``genai-prices`` package's data, under the room's own overrides.

``genai-prices`` ships its price data inside the package (it is read offline; nothing
here asks it to update over the network), matches a client's model name to a
provider's model (``claude-opus-4-6``, ``claude-haiku-4-5-20251001``,
``gpt-5.1-codex``, ``gemini-2.5-pro`` ...) and prices the request as it was priced on
the day it was made, cache reads and writes and long-context tiers included. A model it
does not know has no price: its tokens are counted and its cost is unknown, until the
operator sets one (``agent-room usage price``), which also wins over the package's.

The package is imported when a first request is priced, not with this module: its price
data costs 130 ms to load, which every ``usage``, ``budget`` and ``ask`` command (and
their ``--help``) would pay before it knew whether anything needs a price.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from agent_room.core.usage import Price, Tokens


class Prices:
    """Prices of models: the room's overrides first, then ``genai-prices``."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._unknown: set[str] = set()

    def cost(self, model: str | None, tokens: Tokens, at: float | None = None) -> float | None:
        """What ``tokens`` of ``model`` cost at ``at`` (now if None); None when the model
        has no price."""
        if not model:
            return None
        override = self.overrides.get(model)
        if override is not None:
            return override.cost(tokens)
        if model in self._unknown:
            return None
        from genai_prices import Usage, calc_price  # noqa: PLC0415 - see the module's doc

        try:
            found = calc_price(
                Usage(
                    input_tokens=tokens.input + tokens.cache_read + tokens.cache_write,
                    output_tokens=tokens.output,
                    cache_read_tokens=tokens.cache_read,
                    cache_write_tokens=tokens.cache_write,
                ),
                model_ref=model,
                genai_request_timestamp=datetime.fromtimestamp(at, UTC) if at else None,
            )
        except LookupError:
            self._unknown.add(model)
            return None
        return float(found.total_price)

    def known(self, model: str) -> bool:
        """Whether ``model`` has a price (an override or the package's)."""
        return self.cost(model, Tokens(input=1)) is not None
