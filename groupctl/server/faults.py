"""Fault injection for tests with real clients: observe, replace, drop or delay requests by API key.

Installed on a running `Node` (`node.faults`); the dispatcher consults it before and after each
handler. Rules are one-shot unless `times` says otherwise, so a test can, for example, drop the
next Heartbeat response and watch a real client recover, or hold a SyncGroup answer back the way
a slow store write does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass
class _Rule:
    action: str  # "drop" | "replace" | "delay"
    times: int
    make_response: Optional[Callable[[Any, Any], Any]] = None  # (ctx, request) -> response
    delay_s: float = 0.0  # "delay": how long the handled response is held back


class FaultInjector:
    def __init__(self) -> None:
        self._rules: dict[int, list[_Rule]] = {}
        self._observers: dict[int, list[Callable[[Any, Any], None]]] = {}

    def observe(self, api_key: int, callback: Callable[[Any, Any], None]) -> None:
        """Call `callback(ctx, request)` for every request of `api_key`."""
        self._observers.setdefault(api_key, []).append(callback)

    def drop_next(self, api_key: int, times: int = 1) -> None:
        """Handle the next request(s) of `api_key` but send no response (the client times out)."""
        self._rules.setdefault(api_key, []).append(_Rule("drop", times))

    def replace_next(self, api_key: int, make_response: Callable[[Any, Any], Any], times: int = 1) -> None:
        """Answer the next request(s) of `api_key` with `make_response(ctx, request)` instead of
        running the handler."""
        self._rules.setdefault(api_key, []).append(_Rule("replace", times, make_response))

    def delay_next(self, api_key: int, seconds: float, times: int = 1) -> None:
        """Handle the next request(s) of `api_key` at once but hold each response back for
        `seconds` (the connection answers nothing else meanwhile, as it keeps request order)."""
        self._rules.setdefault(api_key, []).append(_Rule("delay", times, delay_s=seconds))

    def clear(self) -> None:
        self._rules.clear()
        self._observers.clear()

    def notify(self, api_key: int, ctx: Any, request: Any) -> None:
        for callback in self._observers.get(api_key, ()):
            callback(ctx, request)

    def take(self, api_key: int) -> Optional[_Rule]:
        """The rule that applies to this request, consuming one use of it."""
        rules = self._rules.get(api_key)
        if not rules:
            return None
        rule = rules[0]
        rule.times -= 1
        if rule.times <= 0:
            rules.pop(0)
        return rule
