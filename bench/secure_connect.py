"""What security costs a client: connection set-up and pipelined requests per listener protocol.

    python -m bench.secure_connect [--runs 200] [--requests 5000]

Starts one in-process node with PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners (test
certificates from tests/support/certs.py, one user), then, with groupctl's lean client and in
the same process for every protocol (alternating run by run so machine noise hits them alike):
- set-up: connect, TLS handshake, ApiVersions, SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 at
  4096 iterations), the first Metadata: median and p90 milliseconds, ratio to PLAINTEXT;
- throughput: `--requests` pipelined Metadata requests on one connection: requests/s, ratio to
  PLAINTEXT (TLS's cost once connected).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from groupctl.client.kafka import METADATA, Bootstrap, Call, KafkaClient  # noqa: E402
from groupctl.client.security import ClientSecurity  # noqa: E402
from groupctl.layout.credentials import encode_credentials  # noqa: E402
from groupctl.layout.paths import user_path  # noqa: E402
from groupctl.security.scram import make_credential  # noqa: E402
from groupctl.server.config import Listener  # noqa: E402
from tests.support.certs import make_pki  # noqa: E402
from tests.support.coordinator import InProcessCoordinator, node_config  # noqa: E402

PASSWORD = "bench-secret"


def variants(node: InProcessCoordinator, ca: Path) -> dict[str, Bootstrap]:
    def at(listener: str, **security) -> Bootstrap:
        return Bootstrap(f"127.0.0.1:{node.server.port_of(listener)}", ClientSecurity(protocol=listener, **security))

    user = dict(username="bench", password=PASSWORD)
    return {
        "PLAINTEXT": at("PLAINTEXT"),
        "SSL": at("SSL", ca_file=str(ca)),
        "SASL_PLAINTEXT PLAIN": at("SASL_PLAINTEXT", mechanism="PLAIN", **user),
        "SASL_PLAINTEXT SCRAM-SHA-256": at("SASL_PLAINTEXT", mechanism="SCRAM-SHA-256", **user),
        "SASL_SSL SCRAM-SHA-512": at("SASL_SSL", mechanism="SCRAM-SHA-512", ca_file=str(ca), **user),
    }


def metadata(cls: type, version: int):
    return cls(topics=[], allow_auto_topic_creation=False)


def set_up_ms(target: Bootstrap) -> float:
    started = time.perf_counter()
    with KafkaClient(target) as client:
        client.call(None, METADATA, (1, 12), metadata)
    return (time.perf_counter() - started) * 1000


def requests_per_s(target: Bootstrap, count: int) -> float:
    with KafkaClient(target, timeout=120) as client:
        client.call(None, METADATA, (1, 12), metadata)
        started = time.perf_counter()
        done = 0
        while done < count:
            batch = min(500, count - done)
            client.call_many([Call(None, METADATA, (1, 12), metadata)] * batch)
            done += batch
        return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--requests", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-secure-") as directory:
        pki = make_pki(Path(directory))
        config = node_config(
            listeners=tuple(Listener(n, "127.0.0.1", 0) for n in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
            ssl_certfile=pki.server_cert, ssl_keyfile=pki.server_key)
        node = InProcessCoordinator(config).start()
        try:
            credentials = {m: make_credential(m, PASSWORD) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
            node.call(node.node.store.create(user_path("bench"), encode_credentials(credentials), make_parents=True))
            targets = variants(node, pki.ca)
            timings: dict[str, list[float]] = {name: [] for name in targets}
            for _ in range(args.runs):
                for name, target in targets.items():
                    timings[name].append(set_up_ms(target))
            rates = {name: requests_per_s(target, args.requests) for name, target in targets.items()}
        finally:
            node.stop()
    base = statistics.median(timings["PLAINTEXT"])
    print(f"set-up: connect + TLS + ApiVersions + SASL + one Metadata, {args.runs} runs each; "
          f"throughput: {args.requests} pipelined Metadata on one connection")
    print(f"{'protocol':<30} {'median ms':>10} {'p90 ms':>8} {'x PLAINTEXT':>12} {'req/s':>9} {'x PLAINTEXT':>12}")
    for name, values in timings.items():
        values.sort()
        median = statistics.median(values)
        p90 = values[int(len(values) * 0.9) - 1]
        print(f"{name:<30} {median:>10.2f} {p90:>8.2f} {median / base:>12.2f} {rates[name]:>9.0f} "
              f"{rates[name] / rates['PLAINTEXT']:>12.2f}")


if __name__ == "__main__":
    main()
