"""The suite serves logs with the same server the pytest plugin gives its users."""

from dsh_inspect.testing.server import free_port, live_server

__all__ = ["free_port", "live_server"]
