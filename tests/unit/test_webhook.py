"""`groupctl.ops.webhook`: notifications are posted in order from a thread of their own, a failed
post is retried with back-off and logged, a receiver that never recovers is given up on after the
attempts, and `send` never waits for the receiver."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from groupctl.errors import BadInput
from groupctl.ops.webhook import WebhookSender, check_webhook_url


class Receiver:
    """A local webhook receiver answering each POST with the next of `codes` (then 200)."""

    def __init__(self, codes=(), delay_s: float = 0.0) -> None:
        self.bodies: list[dict] = []
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request
        self.codes = list(codes)
        self.posted = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                receiver.requests.append(("POST", self.path))
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(delay_s)
                code = receiver.codes.pop(0) if receiver.codes else 200
                if code == "truncated":  # promises 100 bytes, sends 5, hangs up
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.write(b"short")
                    self.close_connection = True
                    return
                if code == 200:
                    receiver.bodies.append(body)
                    receiver.posted.set()
                self.send_response(code)
                if code in (301, 302, 307):
                    self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):  # noqa: N802
                receiver.requests.append(("GET", self.path))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def warnings():
    return []


def sender(url: str, warnings: list, outcomes: list, **options) -> WebhookSender:
    options = {"first_backoff_s": 0.05, "max_backoff_s": 0.2, "timeout_s": 2.0, **options}
    return WebhookSender(url, warn=warnings.append, on_outcome=outcomes.append, **options)


def test_notifications_arrive_in_the_order_they_were_sent(warnings):
    receiver, outcomes = Receiver(), []
    hook = sender(receiver.url, warnings, outcomes)
    for number in range(5):
        hook.send({"event": "open", "n": number})
    hook.close()
    receiver.close()
    assert [body["n"] for body in receiver.bodies] == [0, 1, 2, 3, 4]
    assert outcomes == ["sent"] * 5 and warnings == []


def test_a_failed_post_is_retried_with_back_off_and_each_failure_is_logged(warnings):
    receiver, outcomes = Receiver(codes=[500, 503]), []
    hook = sender(receiver.url, warnings, outcomes)
    hook.send({"event": "open", "cluster": "local", "group": "billing"})
    hook.close()
    receiver.close()
    assert receiver.bodies == [{"event": "open", "cluster": "local", "group": "billing"}] and outcomes == ["sent"]
    assert len(warnings) == 2 and "HTTP 500" in warnings[0] and "open local billing" in warnings[0]
    assert "attempt 1 of 5, retrying in 0.05s" in warnings[0] and "retrying in 0.1s" in warnings[1]


def test_a_receiver_that_never_answers_well_is_given_up_after_the_attempts(warnings):
    outcomes: list = []
    receiver = Receiver(codes=[500] * 10)
    hook = sender(receiver.url, warnings, outcomes, attempts=3)
    hook.send({"event": "close", "cluster": "local", "group": "billing"})
    hook.close()
    receiver.close()
    assert outcomes == ["failed"] and len(warnings) == 3 and warnings[-1].endswith("given up)")


def test_an_unreachable_receiver_is_logged_and_send_never_waits_for_it(warnings):
    receiver = Receiver(delay_s=1.0)  # slow to answer
    outcomes: list = []
    hook = sender(receiver.url, warnings, outcomes)
    started = time.monotonic()
    for number in range(3):
        hook.send({"n": number})
    assert time.monotonic() - started < 0.5
    hook.close(grace_s=10)
    receiver.close()
    assert outcomes == ["sent"] * 3
    closed = sender("http://127.0.0.1:9/hook", warnings, [], attempts=1)  # discard port: refused
    closed.send({"event": "open"})
    closed.close()
    assert "cannot post" in warnings[-1]


def test_a_full_queue_drops_the_oldest_waiting_notification_and_says_so(warnings):
    receiver, outcomes = Receiver(delay_s=0.3), []
    hook = sender(receiver.url, warnings, outcomes, capacity=1)
    for number in range(4):
        hook.send({"event": "open", "n": number})
    hook.close(grace_s=10)
    receiver.close()
    assert outcomes.count("dropped") >= 1 and receiver.bodies[-1]["n"] == 3
    assert any("queue full" in warning for warning in warnings)


def test_a_redirect_is_a_failure_not_followed_and_a_refusal_is_given_up_at_once(warnings):
    receiver, outcomes = Receiver(codes=[302, 404, 429]), []
    hook = sender(receiver.url, warnings, outcomes, attempts=2)
    hook.send({"event": "open", "n": 1})  # 302, then 404: refused, given up without a second try
    hook.send({"event": "open", "n": 2})  # 429: too many requests, tried again
    hook.close()
    receiver.close()
    assert receiver.requests == [("POST", "/hook")] * 4  # no GET of the redirect's target
    assert outcomes == ["failed", "sent"] and [body["n"] for body in receiver.bodies] == [2]
    assert "HTTP 302" in warnings[0] and "HTTP 404" in warnings[1] and warnings[1].endswith("given up)")


def test_logs_name_the_receiver_without_its_path_or_credentials(warnings):
    hook = sender("http://user:secret@127.0.0.1:9/services/T000/B000/XXXXSECRET", warnings, [], attempts=1)
    hook.send({"event": "open"})
    hook.close()
    assert warnings and all("SECRET" not in w and "secret" not in w for w in warnings)
    assert warnings[0].startswith("webhook http://127.0.0.1:9: cannot post")


def test_close_ends_within_its_grace_and_the_timeout_even_with_a_full_queue_and_a_dead_receiver(warnings):
    receiver = Receiver(codes=[500] * 100)
    hook = sender(receiver.url, warnings, [], capacity=2, first_backoff_s=5.0, max_backoff_s=5.0)
    for number in range(5):
        hook.send({"event": "open", "n": number})
    started = time.monotonic()
    hook.close(grace_s=0.5)
    assert time.monotonic() - started < 0.5 + 2.0 + 1  # the grace, then at most a post in flight
    receiver.close()
    assert warnings[-1].endswith("notification(s) not posted at shutdown")  # handed back, and said


def test_a_malformed_answer_is_a_failed_post_retried_and_the_sender_lives_on(warnings):
    receiver, outcomes = Receiver(codes=["truncated"]), []
    hook = sender(receiver.url, warnings, outcomes)
    hook.send({"event": "open", "n": 1})
    hook.send({"event": "close", "n": 2})
    hook.close()
    receiver.close()
    assert outcomes == ["sent", "sent"] and [body["n"] for body in receiver.bodies] == [1, 2]
    assert "bad answer: IncompleteRead" in warnings[0]


def test_close_hands_back_what_it_could_not_post_the_one_in_flight_included(warnings):
    receiver, outcomes = Receiver(codes=[500] * 100), []
    hook = sender(receiver.url, warnings, outcomes, first_backoff_s=5.0, max_backoff_s=5.0)
    for number in range(3):
        hook.send({"event": "open", "n": number})
    assert receiver.posted.wait(0.0) is False
    deadline = time.monotonic() + 5
    while not receiver.requests and time.monotonic() < deadline:  # the first post is being retried
        time.sleep(0.02)
    unposted = hook.close(grace_s=0.2)
    receiver.close()
    assert [document["n"] for document in unposted] == [0, 1, 2] and outcomes == ["unsent"] * 3


@pytest.mark.parametrize("url", ["ftp://host/x", "localhost:8080", "http://", "not a url", "http://127.0.0.1:abc/x",
                                 "http://127.0.0.1:99999/x"])
def test_only_http_urls_with_a_host_are_webhooks(url):
    with pytest.raises(BadInput, match="--webhook"):
        check_webhook_url(url)
