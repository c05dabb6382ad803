"""Running a node in the foreground: logging, the event loop, the startup banner."""

from __future__ import annotations

import asyncio
import logging
import sys

from groupctl.log import LogError
from groupctl.server.server import ListenerFailed
from groupctl.server.config import NodeConfig
from groupctl.server.tls import TlsConfigError
from groupctl.store.base import StoreError


class NodeFailed(Exception):
    """The node could not start or run: its store, its logs, its data dir or its address. The
    message is one line for the operator (the CLI prints it and exits 1)."""


def run_node(config: NodeConfig, *, log_level: str = "info") -> None:
    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        asyncio.run(_serve(config))
    except StoreError as exc:
        raise NodeFailed(f"metadata store: {exc}") from exc
    except LogError as exc:
        raise NodeFailed(f"partition logs in {config.data_dir}: {exc}") from exc
    except TlsConfigError as exc:
        raise NodeFailed(f"TLS: {exc}") from exc
    except ListenerFailed as exc:
        raise NodeFailed(str(exc)) from exc
    except OSError as exc:
        if exc.filename:  # the data dir, not the address
            raise NodeFailed(f"cannot use {exc.filename}: {exc.strerror or exc}") from exc
        raise NodeFailed(f"cannot start the coordinator on {config.host}:{config.port}: "
                         f"{exc.strerror or exc}") from exc


async def _serve(config: NodeConfig) -> None:
    from groupctl.server.server import CoordinatorServer

    server = CoordinatorServer(config)
    store = f"ZooKeeper {config.zk}" if config.zk else (
        f"embedded store in {config.data_dir}" if config.data_dir else "in-memory store (nothing persisted)")
    def ready() -> None:
        metrics = (f"; metrics on http://{config.metrics_host}:{server.metrics_port}/metrics"
                   if server.metrics_port is not None else "")
        print(f"groupctl coordinator node {config.node_id} ready: bootstrap.servers={server.bootstrap} "
              f"({store}){metrics}; Ctrl-C to stop", flush=True)

    await server.run(on_ready=ready)
