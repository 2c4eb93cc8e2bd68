"""The price source asked directly, as the tests' oracle for what the room computes."""

from __future__ import annotations

from genai_prices import Usage, calc_price


def listed_price(model: str, input: int, output: int, cache_read: int, cache_write: int) -> float:
    """What genai-prices charges for one request (``input`` without the cached part, as
    Anthropic counts it; the package counts the cached part in its input)."""
    usage = Usage(
        input_tokens=input + cache_read + cache_write,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    return float(calc_price(usage, model_ref=model).total_price)
