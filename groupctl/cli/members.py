"""`groupctl members ...`: rehearse a group's membership with simulated members.

`members simulate` runs N members of one group in this process against --bootstrap
(`groupctl.simulate`), shows what the rebalance costs (`members_render`), and makes every member
leave before it exits, so nothing is left behind for the coordinator to expire. docs/simulate.md
is the reference: options, the JSON keys and what each measures, the exit statuses.

How a run ends, and its exit status:
- --until-stable: 0 once the group is stable; 1 when --duration (120 s unless given) passes
  first, with the summary still printed and one stderr line naming what was not stable.
- Otherwise: --duration, or Ctrl-C/SIGTERM; 0.
- Ctrl-C or SIGTERM: the members leave, the summary is printed, 0 (--until-stable too). A second
  one while they leave aborts at once: 130, no summary, members left to the session timeout.
- A JSON reader that goes away (`| head`) stops the rehearsal as Ctrl-C does.

Nothing of the engine (the Kafka client, the member state machine) is imported until the
command runs: `groupctl --help` and completion stay fast (bench/cli_latency.py).
"""

from __future__ import annotations

import math
import re
import signal
from enum import Enum
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from groupctl.cli.context import CliEnv, env, fail, guard
from groupctl.cli.errors import BadInput, ExitStatus
from groupctl.cli.members_render import JsonLinesOutput, TableOutput, not_all_left_message, not_stable_message

if TYPE_CHECKING:
    from groupctl.simulate.context import Settings
    from groupctl.simulate.simulation import Snapshot, Summary

app = typer.Typer(help="Rehearse group membership: simulated members against a coordinator.",
                  no_args_is_help=True)

UNTIL_STABLE_DURATION_S = 120.0
"""--until-stable's --duration when none is given: a rehearsal that never settles still ends."""

CHURN = re.compile(r"(\d+(?:\.\d+)?)(?:/(s|m|h))?")
PER_SECOND = {None: 1.0, "s": 1.0, "m": 1 / 60, "h": 1 / 3600}
ABORTED = 130  # the shell's status for a process ended by SIGINT


class Protocol(str, Enum):
    consumer = "consumer"
    classic = "classic"


class Assignor(str, Enum):
    uniform = "uniform"
    range = "range"


def parse_churn(text: str) -> float:
    """Members restarted per second, from "2", "0.5", "2/s", "30/m" or "100/h"; 0 is no churn."""
    match = CHURN.fullmatch(text.strip())
    if match is None:
        raise BadInput(f"--churn '{text}' is not a rate (members restarted: 2 or 2/s per second, 30/m per minute)")
    return float(match.group(1)) * PER_SECOND[match.group(2)]


@app.command("simulate")
@guard
def simulate(
    ctx: typer.Context,
    group: str = typer.Option(..., "--group", help="The group the members join."),
    topic: List[str] = typer.Option([], "--topic", help="A topic to subscribe to (repeatable)."),
    pattern: Optional[str] = typer.Option(
        None, "--pattern", help="Subscribe to the topics matching this RE2 regex (with or instead of --topic)."),
    count: int = typer.Option(..., "--count", min=1, help="How many members to run (at least 1)."),
    protocol: Protocol = typer.Option(
        Protocol.consumer, "--protocol", case_sensitive=False,
        help="consumer: KIP-848 heartbeats, the server assigns; classic: JoinGroup/SyncGroup, the leader assigns."),
    until_stable: bool = typer.Option(
        False, "--until-stable", help="Exit 0 once the group is stable; 1 if --duration passes first."),
    duration: Optional[str] = typer.Option(
        None, "--duration", help="Stop after this long: 500ms, 120s, 2m, 1h (a bare number is seconds). "
        "Default: until Ctrl-C; 120s with --until-stable."),
    assignor: Assignor = typer.Option(
        Assignor.uniform, "--assignor", case_sensitive=False,
        help="uniform or range (classic: uniform is cooperative-sticky, range is eager range)."),
    static: bool = typer.Option(False, "--static", help="Static members (group.instance.id <group>-sim-<n>)."),
    churn: Optional[str] = typer.Option(
        None, "--churn", help="Rolling restarts: members restarted per second, 2 or 2/s, 30/m."),
    commit: bool = typer.Option(
        False, "--commit", help="Commit each partition's position before revoking it (OffsetCommit v9)."),
) -> None:
    """Run COUNT members of GROUP against the coordinator and show what the rebalance costs.

    A live view on a terminal; with JSON output, a line per member state change, then a summary.

    Every member leaves the group before the command exits (at the end, on Ctrl-C or SIGTERM).

    Exit 0; with --until-stable, 1 when the group is not stable within --duration."""
    from groupctl.cli.lag import parse_duration  # the CLI's one duration grammar

    current = env(ctx)
    duration_s = parse_duration(duration, "--duration") if duration is not None else (
        UNTIL_STABLE_DURATION_S if until_stable else math.inf)
    churn_per_s = parse_churn(churn) if churn is not None else 0.0
    bootstrap = current.need_bootstrap()

    from groupctl.simulate.context import Settings

    settings = Settings(bootstrap=bootstrap, group=group, count=count, topics=tuple(topic), pattern=pattern,
                        protocol=protocol.value, assignor=assignor.value, static=static, commit=commit,
                        churn_per_s=churn_per_s)
    run = _Run(current, settings, duration_s, until_stable)  # checks the settings (BadInput)
    summary = run.rehearse()
    if summary is None:
        fail(current, "aborted while the members were leaving: the coordinator removes those left "
                      "after their session timeout", ABORTED)
    if summary.left < summary.members:
        current.err.print(f"groupctl: warning: {not_all_left_message(summary)}", markup=False, highlight=False)
    if until_stable and summary.ended_by == "duration":
        fail(current, not_stable_message(duration_s, run.last), int(ExitStatus.FAILED))


class _Run:
    """One rehearsal on its own event loop: the simulation, the output chosen by --output and the
    terminal, and the signals (the first stops, a second aborts)."""

    def __init__(self, current: CliEnv, settings: "Settings", duration_s: float, until_stable: bool) -> None:
        from groupctl.simulate.simulation import Simulation

        self.current = current
        self.duration_s = duration_s
        self.until_stable = until_stable
        self.last: Optional["Snapshot"] = None
        self._stop: Any = None  # the asyncio.Event, made on the loop
        self._task: Any = None
        self._aborted = False
        if current.json:
            self.output: "JsonLinesOutput | TableOutput" = JsonLinesOutput(current, on_closed=self._request_stop)
        else:
            self.output = TableOutput(current, settings.group, settings.protocol, settings.count,
                                      live=current.out.is_terminal)
        self.simulation = Simulation(settings, on_transition=self.output.transition)

    def rehearse(self) -> Optional["Summary"]:
        """Run to the end and print the summary; None when aborted by a second signal."""
        import asyncio

        with self.output:
            summary = asyncio.run(self._main())
        if summary is not None:
            self.output.finish(summary)
        return summary

    async def _main(self) -> Optional["Summary"]:
        import asyncio

        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for sig in previous:
                loop.add_signal_handler(sig, self._signalled)
            self._task = asyncio.ensure_future(self.simulation.run(
                self._stop, duration_s=self.duration_s, until_stable=self.until_stable, on_check=self._checked))
            return await self._task
        except asyncio.CancelledError:
            if self._aborted:
                return None
            raise
        finally:
            for sig, handler in previous.items():
                loop.remove_signal_handler(sig)
                if handler is not None:  # None: a handler not installed from Python, nothing to restore
                    signal.signal(sig, handler)

    def _checked(self, snapshot: "Snapshot") -> None:
        self.last = snapshot
        self.output.check(snapshot)

    def _signalled(self) -> None:
        if self._stop.is_set():
            self._aborted = True
            self._task.cancel()
            return
        self._request_stop()

    def _request_stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self.output.stopping()
