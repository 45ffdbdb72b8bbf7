"""Where a session's tokens, time and money went: token counts as dsh logs them (`tokens`), spans and durations
from the events' own times (`timing`), and each model call's price (`cost`), docs/decisions/0030-time-and-prices.md."""
