"""Real ZooKeeper servers for tests: a standalone server and a 3-node ensemble on 127.0.0.1.

The classpath comes from `ZOOKEEPER_CLASSPATH`, else `$ZOOKEEPER_HOME/lib/*.jar` (a ZooKeeper
distribution, e.g. on macOS), else Debian's `/usr/share/java/zookeeper.jar` (plus
`slf4j-simple.jar` when present, so the server log in the data dir says something).

Every server binds 127.0.0.1 on free ports, keeps its data and log in a directory the caller
owns, and is stopped by its own pid (terminate, then kill). Every wait is bounded.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
DEBIAN_SLF4J = Path("/usr/share/java/slf4j-simple.jar")
STANDALONE_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
QUORUM_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
JVM_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def classpath() -> Optional[str]:
    explicit = os.environ.get("ZOOKEEPER_CLASSPATH")
    if explicit:
        return explicit
    home = os.environ.get("ZOOKEEPER_HOME")
    if home:
        jars = sorted(str(p) for p in Path(home, "lib").glob("*.jar"))
        jars += sorted(str(p) for p in Path(home).glob("zookeeper-*.jar"))
        return ":".join(jars) or None
    if DEBIAN_JAR.exists():
        return ":".join(str(p) for p in (DEBIAN_JAR, DEBIAN_SLF4J) if p.exists())
    return None


def unavailable_reason() -> Optional[str]:
    """Why a real ZooKeeper cannot be started here, or None when it can."""
    if shutil.which("java") is None:
        return "java is not installed (Debian: apt-get install zookeeper)"
    if classpath() is None:
        return (f"no ZooKeeper jars: {DEBIAN_JAR} is missing and neither ZOOKEEPER_CLASSPATH nor "
                "ZOOKEEPER_HOME is set (Debian: apt-get install zookeeper)")
    return None


def free_port() -> int:
    (port,) = free_ports(1)
    return port


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free on 127.0.0.1 now (all held until every one is picked)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def four_letter_word(port: int, word: str, timeout_s: float = 1.0) -> str:
    """Send a four-letter command to 127.0.0.1:port; '' when the server does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
            s.sendall(word.encode())
            chunks = []
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def server_mode(port: int) -> Optional[str]:
    """'leader', 'follower' or 'standalone' from `srvr`; None when not serving."""
    for line in four_letter_word(port, "srvr").splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return None


def expire_session(hosts: str, session_id: int, password: bytes) -> None:
    """End a ZooKeeper session on the server, as an expiry would: a second client attached to the
    same session closes it, and the session's own client then finds it gone (blocking; run it
    in an executor from async code)."""
    from kazoo.client import KazooClient

    thief = KazooClient(hosts=hosts, client_id=(session_id, password))
    thief.start(timeout=10)
    thief.stop()
    thief.close()


def _config(data_dir: Path, client_port: int, extra: list[str]) -> Path:
    lines = [
        "tickTime=500",
        "initLimit=20",
        "syncLimit=10",
        f"dataDir={data_dir}",
        f"clientPort={client_port}",
        "clientPortAddress=127.0.0.1",
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr,stat,mntr",
        "forceSync=no",
        "preAllocSize=4096",
        *extra,
    ]
    path = data_dir / "zoo.cfg"
    path.write_text("\n".join(lines) + "\n")
    return path


class _Process:
    """One ZooKeeper JVM, stopped by its pid."""

    def __init__(self, main_class: str, config: Path, log_path: Path) -> None:
        self.log_path = log_path
        with open(log_path, "ab") as out:
            self.popen = subprocess.Popen(
                ["java", *JVM_FLAGS, "-cp", classpath(), main_class, str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """Crash it (SIGKILL), as a machine failure would."""
        if self.running:
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(STOP_TIMEOUT_S)

    def stop(self) -> None:
        if self.running:
            self.popen.terminate()
            try:
                self.popen.wait(STOP_TIMEOUT_S)
                return
            except subprocess.TimeoutExpired:
                pass
        self.kill()


class ZooKeeperServer:
    """A standalone ZooKeeper on 127.0.0.1:<free port>; `connect` is its connect string."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.connect = f"127.0.0.1:{self.port}"
        self._process: Optional[_Process] = None

    @property
    def pid(self) -> Optional[int]:
        return self._process.popen.pid if self._process else None

    def start(self) -> "ZooKeeperServer":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = _config(self.data_dir, self.port, [])
        self._process = _Process(STANDALONE_MAIN, config, self.data_dir / "zookeeper.log")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if four_letter_word(self.port, "ruok") == "imok":
                return self
            if not self._process.running:
                break
            time.sleep(0.05)
        tail = self._process.log_tail()
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer ruok on {self.connect}:\n{tail}")

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None


class ZooKeeperEnsemble:
    """A 3-node ensemble (QuorumPeerMain) on 127.0.0.1; `connect` lists all three servers."""

    def __init__(self, base_dir: Path, size: int = 3) -> None:
        self.base_dir = base_dir
        self.size = size
        ports = free_ports(3 * size)
        self.client_ports = ports[:size]
        self._peer_ports = list(zip(ports[size::2], ports[size + 1::2]))
        self.connect = ",".join(f"127.0.0.1:{p}" for p in self.client_ports)
        self._processes: dict[int, _Process] = {}

    def start(self) -> "ZooKeeperEnsemble":
        servers = [f"server.{i + 1}=127.0.0.1:{quorum}:{election}"
                   for i, (quorum, election) in enumerate(self._peer_ports)]
        for i in range(self.size):
            data_dir = self.base_dir / f"zk{i + 1}"
            data_dir.mkdir(parents=True, exist_ok=True)
            (data_dir / "myid").write_text(f"{i + 1}\n")
            config = _config(data_dir, self.client_ports[i], servers)
            self._processes[i] = _Process(QUORUM_MAIN, config, data_dir / "zookeeper.log")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            modes = [server_mode(p) for p in self.client_ports]
            if all(m in ("leader", "follower") for m in modes) and modes.count("leader") == 1:
                return self
            time.sleep(0.1)
        tails = "\n".join(p.log_tail(5) for p in self._processes.values())
        self.stop()
        raise RuntimeError(f"ZooKeeper ensemble {self.connect} did not form a quorum:\n{tails}")

    def leader(self) -> Optional[int]:
        """Index (0-based) of the server that reports Mode: leader, if any."""
        for i, port in enumerate(self.client_ports):
            if i in self._processes and server_mode(port) == "leader":
                return i
        return None

    def kill_leader(self) -> int:
        """SIGKILL the current leader; returns its index."""
        index = self.leader()
        if index is None:
            raise RuntimeError(f"no leader in ensemble {self.connect}")
        self._processes.pop(index).kill()
        return index

    def stop(self) -> None:
        for index in list(self._processes):
            self._processes.pop(index).stop()
