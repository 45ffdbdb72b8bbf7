"""Server settings, Datasette style: documented limits with defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    # Extra Host header values to accept besides the bound address and localhost
    # (DNS-rebinding defence: anything else is refused).
    allowed_hosts: tuple[str, ...] = ()
    # Rows rendered per window of a session page; later windows load as the reader scrolls.
    window_rows: int = 60

    def host_allowed(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        host = host_header.strip().lower()
        names = {self.host.lower(), "127.0.0.1", "localhost", "[::1]", *map(str.lower, self.allowed_hosts)}
        if self.host in ("0.0.0.0", "::"):
            return True  # bound to every interface on purpose: the operator chose exposure
        for name in names:
            if host == name or host == f"{name}:{self.port}":
                return True
        return False
