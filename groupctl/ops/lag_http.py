"""The HTTP side of `groupctl lag serve`: Burrow's v3 API (`groupctl.lag.burrow_api`) and
Prometheus' /metrics, read from the latest evaluation.

Routes (GET; HEAD answers the same headers):
- `/v3/kafka`: the cluster list; `/v3/kafka/{cluster}`: the cluster's sampling settings;
- `/v3/kafka/{cluster}/consumer`: its groups; `/v3/kafka/{cluster}/consumer/{group}`: the
  window's commits per partition; `.../status`: the group's status with the partitions not OK;
  `.../lag`: with every partition;
- `/metrics`: Prometheus text; `/burrow/admin`: `GOOD` (Burrow's health check);
  `/burrow/admin/ready`: `READY` once a round has been evaluated, else 503 `STARTING` (Burrow's
  readiness check, for a Kubernetes probe).
A group's status or lag in a cluster not served is Burrow's NOTFOUND (404), as Burrow answers it.
Burrow's topic routes are not served: `lag serve` knows the log ends of the watched groups'
partitions only, and a partial topic list would mislead.
Anything else is a 404 with Burrow's error document; a method other than GET or HEAD is a 405
(with `Allow`).

Invariants: answers are built from one `Evaluation` (`latest()` once per request), never from a
round in progress; the server binds the host it is given (loopback by default) and runs on daemon
threads that `close` ends; a connection idle for `IDLE_TIMEOUT_S` is closed, so idle clients
cannot pile up threads.
"""

from __future__ import annotations

import json
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional
from urllib.parse import unquote, urlsplit

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from groupctl.errors import OpsError
from groupctl.lag import burrow_api
from groupctl.lag.live import Evaluation


IDLE_TIMEOUT_S = 30


class LagHttpServer:
    """Serves `latest()` for `cluster` at http://host:port (port 0: a free one, see `port`)."""

    def __init__(self, host: str, port: int, *, cluster: str, settings: dict,
                 latest: Callable[[], Evaluation], registry: CollectorRegistry,
                 ready: Callable[[], bool] = lambda: True) -> None:
        handler = type("Handler", (_Handler,), {"cluster": cluster, "settings": settings, "latest": staticmethod(latest),
                                                "ready": staticmethod(ready), "registry": registry,
                                                "hostname": socket.gethostname()})
        server_class = _IPv6Server if ":" in host else ThreadingHTTPServer
        try:
            self._server = server_class((host, port), handler)
        except OSError as exc:
            raise OpsError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, name="groupctl-lag-http", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    cluster: str
    settings: dict
    latest: Callable[[], Evaluation]
    ready: Callable[[], bool]
    registry: CollectorRegistry
    hostname: str
    server_version = "groupctl-lag-serve"
    timeout = IDLE_TIMEOUT_S

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(with_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(with_body=False)

    def _refuse_method(self) -> None:
        self._send_json(HTTPStatus.METHOD_NOT_ALLOWED, burrow_api.error("method not allowed"), with_body=True,
                        allow="GET, HEAD")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse_method

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - no access log on stderr
        return

    def _answer(self, *, with_body: bool) -> None:
        path = urlsplit(self.path).path.rstrip("/") or "/"
        if path == "/metrics":
            return self._send(HTTPStatus.OK, CONTENT_TYPE_LATEST, generate_latest(self.registry), with_body)
        if path == "/burrow/admin":
            return self._send(HTTPStatus.OK, "text/plain", b"GOOD", with_body)
        if path == "/burrow/admin/ready":
            ready = self.ready()
            return self._send(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE, "text/plain",
                              b"READY" if ready else b"STARTING", with_body)
        status, document = self._route([unquote(part) for part in path.split("/")[1:]])
        self._send_json(status, document, with_body)

    def _route(self, parts: list[str]) -> tuple[int, dict]:
        """(HTTP status, document) of a /v3/kafka path."""
        if parts[:2] != ["v3", "kafka"] or len(parts) > 6:
            return HTTPStatus.NOT_FOUND, burrow_api.error("invalid request type")
        rest = parts[2:]
        if not rest:
            return HTTPStatus.OK, burrow_api.cluster_list([self.cluster])
        evaluation = self.latest()
        if len(rest) == 4 and rest[1] == "consumer" and rest[3] in ("status", "lag"):  # any cluster: NOTFOUND
            return burrow_api.group_status(evaluation, rest[0], rest[2], show_all=rest[3] == "lag")
        if rest[0] != self.cluster:
            return HTTPStatus.NOT_FOUND, burrow_api.error("cluster not found")
        if len(rest) == 1:
            return HTTPStatus.OK, burrow_api.answer("cluster module detail returned", module=self.settings)
        if rest[1] != "consumer":
            return HTTPStatus.NOT_FOUND, burrow_api.error("invalid request type")
        if len(rest) == 2:
            return HTTPStatus.OK, burrow_api.consumer_list(evaluation, self.cluster)
        group = rest[2]
        if len(rest) == 3:
            detail = burrow_api.consumer_detail(evaluation, self.cluster, group)
            if detail is None:
                return HTTPStatus.NOT_FOUND, burrow_api.error("cluster or consumer not found")
            return HTTPStatus.OK, detail
        return HTTPStatus.NOT_FOUND, burrow_api.error("invalid request type")

    def _send_json(self, status: int, document: dict, with_body: bool, allow: Optional[str] = None) -> None:
        document = {**document, "request": {"url": urlsplit(self.path).path, "host": self.hostname}}
        self._send(status, "application/json", json.dumps(document).encode(), with_body, allow)

    def _send(self, status: int, content_type: str, body: bytes, with_body: bool, allow: Optional[str] = None) -> None:
        self.send_response(status)
        if allow is not None:
            self.send_header("Allow", allow)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)
