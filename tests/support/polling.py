"""Waiting for something a real peer does (ZooKeeper, a client process, a watch), bounded in
time: the one place tests poll. Rules with time in them are tested on a manual clock instead."""

from __future__ import annotations

import asyncio
import time

POLL_S = 0.05


def wait_until(predicate, timeout: float, interval: float = 0.1, message: str = "condition"):
    """Poll `predicate` until it returns a truthy value or `timeout` seconds pass (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)


async def eventually(predicate, timeout: float = 20.0, message: str = "condition"):
    """`wait_until` on an event loop: poll without blocking it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        await asyncio.sleep(POLL_S)


async def run_ready_tasks(turns: int = 10) -> None:
    """Let every task that can run go as far as it can without I/O or a timer: a few event-loop
    iterations, no time passing (for asserting what a task is blocked on)."""
    for _ in range(turns):
        await asyncio.sleep(0)
