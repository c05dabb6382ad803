"""Ports for tests that must reach nothing."""

from __future__ import annotations

import socket


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released): a command given it
    fails at once if it tries to connect, so bad input must be refused before any contact."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
