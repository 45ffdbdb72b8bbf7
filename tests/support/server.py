"""The suite serves logs with the same server the pytest plugin gives its users."""

from dsh_inspect.testing.server import live_server

__all__ = ["live_server"]
