"""dsh-inspect as a test tool: seed recorded dsh histories into a real server and open them in Chromium.

Installed as the pytest plugin `dsh_inspect` (entry point `pytest11`); see README "Testing with
seeded histories".
"""

from .conversations import assert_same_conversation, conversation_diff
from .seeding import SeededSession, realize_placeholders, seed_events

__all__ = ["SeededSession", "assert_same_conversation", "conversation_diff", "realize_placeholders", "seed_events"]
