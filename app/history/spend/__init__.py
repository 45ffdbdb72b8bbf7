"""Where a session's time and money went: spans and durations from the events' own times (`timing`), and each
model call's price (`cost`), docs/decisions/0030-time-and-prices.md."""
