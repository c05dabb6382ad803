"""POSTing JSON notifications to a webhook without ever holding up the caller (`lag serve
--webhook`).

Invariants:
- `send` only queues: one thread of the sender's own posts, in the order sent.
- A failed post (a connection error, a timeout, an HTTP status other than 2xx) is logged through
  `warn` and tried again after a back-off doubling from `first_backoff_s` up to `max_backoff_s`,
  at most `attempts` times in all; then it is given up, logged, and the next one is posted. A 4xx
  other than 408 and 429 is given up at once: the receiver refuses it, sending it again will not
  change that.
- A redirect is a failure, not followed: urllib would turn the POST into a GET without its body
  and count the receiver's answer to that as delivered.
- Logs name the receiver by scheme, host and port only: webhook URLs (Slack's, Teams') carry their
  secret in the path. The standard proxy variables (http_proxy, https_proxy, no_proxy) apply.
- Bounded: the queue holds at most `capacity` notifications (when full, the oldest waiting one is
  dropped and logged), each wait for the receiver by `timeout_s` (a connection, or a read: a
  receiver trickling bytes can stretch one post), each back-off by `max_backoff_s`; `close` never
  blocks on a full queue, waits at most `grace_s` for what is queued, then stops the thread mid
  back-off and returns what was not posted (the caller may keep it: `lag serve --out` posts it
  after its restart), a post still in flight included: it may arrive twice (at least once).
- Nothing kills the thread: a malformed answer is a failed post, and anything else unexpected
  gives that one notification up, logged.
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import urllib.error
import urllib.request
from typing import Callable, Optional
from urllib.parse import urlsplit

from groupctl.errors import BadInput

def check_webhook_url(url: str) -> str:
    """`url`, if it is an http(s) URL with a host; BadInput otherwise."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"--webhook must be an http:// or https:// URL, not '{url}'")
    return url


class WebhookSender:
    """Posts each document given to `send` to `url` as JSON (see the module docstring).
    `on_outcome("sent" | "failed" | "dropped")` counts what became of each one."""

    def __init__(self, url: str, *, warn: Callable[[str], None], on_outcome: Callable[[str], None] = lambda _: None,
                 attempts: int = 5, first_backoff_s: float = 1.0, max_backoff_s: float = 30.0,
                 timeout_s: float = 5.0, capacity: int = 1000) -> None:
        self.url = check_webhook_url(url)
        parts = urlsplit(url)
        self._receiver = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"  # no path, no credentials
        self._warn = warn
        self._on_outcome = on_outcome
        self._attempts = attempts
        self._first_backoff_s = first_backoff_s
        self._max_backoff_s = max_backoff_s
        self._timeout_s = timeout_s
        self._queue: queue.Queue = queue.Queue(maxsize=capacity)
        self._lock = threading.Lock()
        self._in_flight: Optional[dict] = None  # being posted (or retried) by the thread
        self._aborted: list[dict] = []  # cut short by close()
        self._draining = threading.Event()  # close(): post what is queued, then stop
        self._closing = threading.Event()  # the grace is over: stop now
        self._thread = threading.Thread(target=self._run, name="groupctl-webhook", daemon=True)
        self._thread.start()

    def send(self, document: dict) -> None:
        """Queue `document` for posting, dropping the oldest waiting one when the queue is full;
        never blocks."""
        while True:
            try:
                self._queue.put_nowait(document)
                return
            except queue.Full:
                try:
                    dropped = self._queue.get_nowait()
                except queue.Empty:
                    continue
                self._warn(f"webhook queue full: dropped a notification ({_describe(dropped)})")
                self._on_outcome("dropped")

    def close(self, grace_s: float = 5.0) -> list[dict]:
        """Post what is queued within `grace_s`, then stop; the notifications not posted (queued,
        or in flight when the grace ran out: it may yet arrive), each counted `unsent`."""
        self._draining.set()
        self._thread.join(grace_s)
        self._closing.set()
        self._thread.join(self._timeout_s + 1)
        with self._lock:
            unposted = list(self._aborted) + ([self._in_flight] if self._in_flight is not None else [])
        while True:
            try:
                unposted.append(self._queue.get_nowait())
            except queue.Empty:
                break
        for _ in unposted:
            self._on_outcome("unsent")
        if unposted:
            self._warn(f"webhook {self._receiver}: {len(unposted)} notification(s) not posted at shutdown")
        return unposted

    def _run(self) -> None:
        while not self._closing.is_set():
            try:
                document = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self._draining.is_set():
                    return
                continue
            with self._lock:
                self._in_flight = document
            try:
                outcome = self._post_with_retries(document)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive any one notification
                self._warn(f"webhook {self._receiver}: {exc!r} ({_describe(document)}; given up)")
                outcome = "failed"
            with self._lock:
                self._in_flight = None
                if outcome == "aborted":
                    self._aborted.append(document)
            if outcome != "aborted":
                self._on_outcome(outcome)

    def _post_with_retries(self, document: dict) -> str:
        """"sent", "failed" (given up) or "aborted" (the grace ran out before it was posted)."""
        body = json.dumps(document, separators=(",", ":")).encode()
        backoff = self._first_backoff_s
        for attempt in range(1, self._attempts + 1):
            problem, retry = self._post(body)
            if problem is None:
                return "sent"
            if self._closing.is_set():
                return "aborted"
            last = attempt == self._attempts or not retry
            self._warn(f"webhook {self._receiver}: {problem} ({_describe(document)}; "
                       + ("given up" if last else f"attempt {attempt} of {self._attempts}, retrying in {backoff:g}s")
                       + ")")
            if last:
                return "failed"
            if self._closing.wait(backoff):
                return "aborted"
            backoff = min(backoff * 2, self._max_backoff_s)
        return "failed"

    def _post(self, body: bytes) -> tuple[Optional[str], bool]:
        """(None, _) when the receiver accepted `body` (2xx); else (what went wrong, whether
        trying again may help)."""
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with _OPENER.open(request, timeout=self._timeout_s) as response:
                response.read()
                return None, False
        except urllib.error.HTTPError as exc:
            return f"HTTP {exc.code} {exc.reason}", not (400 <= exc.code < 500) or exc.code in (408, 429)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return f"cannot post: {reason}", True
        except http.client.HTTPException as exc:  # a malformed answer: IncompleteRead, BadStatusLine, ...
            return f"bad answer: {exc!r}", True


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is answered as it is (an HTTPError), never followed."""

    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def _describe(document: object) -> str:
    """A notification named in a log line: its event, cluster and group when it has them."""
    if isinstance(document, dict):
        return " ".join(str(document.get(key, "?")) for key in ("event", "cluster", "group"))
    return "?"
