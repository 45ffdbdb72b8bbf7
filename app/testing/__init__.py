"""dsh-inspect as a test tool: seed recorded dsh histories into a real server and open them in Chromium.

Installed as the pytest plugin `dsh_inspect` (entry point `pytest11`); see README "Testing with
seeded histories". The public API:

- `events`: builders for the events scenarios are made of (`from dsh_inspect.testing import events`);
- `SeedError`: what `seed_session` and `append_events` raise for events dsh would not load;
- `settled`: a read repeated until it stops changing;
- `normalize` and `RULES`: how goldens replace run-to-run noise by tokens;
- `seed_events`, `realize_placeholders`, `SeededSession`: seeding without the plugin's server;
- `conversation_diff`, `assert_same_conversation`: where two recorded conversations part.
"""

from . import events
from .conversations import assert_same_conversation, conversation_diff
from .goldens import RULES, normalize
from .seeding import SeededSession, SeedError, realize_placeholders, seed_events
from .settling import settled

__all__ = [
    "RULES",
    "SeedError",
    "SeededSession",
    "assert_same_conversation",
    "conversation_diff",
    "events",
    "normalize",
    "realize_placeholders",
    "seed_events",
    "settled",
]
