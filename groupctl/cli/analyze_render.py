"""Rendering of `groupctl analyze` results: rich tables for people, one JSON document for scripts.

Tables follow `render`'s conventions (borderless, kafka-consumer-groups.sh style, "-" for none,
plain-text cells so a group named "x[/y]" is never read as markup), with the status cells coloured:
OK green, WARN yellow, ERR/STOP/STALL/REWIND red, NOTFOUND dim. Durations are humanised
("3h 04m"); the JSON keeps the raw numbers.

JSON documents (stable keys):
- lag: {evaluated_at, evaluated_at_iso, window, allowed_lag, rules, groups: [...], partitions: [...], skipped}
- rebalances: {groups: [...], timeline: [...], not_found: [...], skipped}
- audit: {summary: [...], violations: [...], skipped}; a violation's `records` are the journal
  events themselves (objects), in event order.
Rows carry the contract's columns (docs/lag-and-rebalances.md); every epoch-millisecond field
whose name ends in `_ts` also gets its UTC ISO-8601 form under the same name plus `_iso`.
Non-finite numbers become null.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from groupctl.cli import render
from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from groupctl.analytics.jobs import AuditResult, LagResult, RebalancesResult, Skipped

STATUS_STYLE = {"OK": "green", "WARN": "yellow", "ERR": "bold red", "STOP": "bold red", "STALL": "bold red",
                "REWIND": "bold red", "NOTFOUND": "dim"}
NUMERIC_COLUMNS = {"PARTITIONS", "COMPLETE", "TOTAL-LAG", "MAX-LAG", "MAX-LAG-TIME", "TREND", "CATCH-UP", "LAG-TIME",
                   "REBALANCES", "P50", "P95", "MAX", "STOPPED", "UNFINISHED", "JOINS", "LEAVES", "EXPIRED",
                   "DURATION", "MOVED", "CHECKED", "VIOLATIONS", "UNVERIFIED"}
"""Numbers beyond those `render.table` knows by name (…OFFSET, LAG, PARTITION, MEMBERS, NODE, …):
right-aligned, never cut (STATUS, LAST and COMPLETED are never cut either: `render.WHOLE`)."""


# -- JSON ----------------------------------------------------------------------------------------


def lag_document(result: "LagResult") -> dict:
    return {"evaluated_at": result.evaluated_at, "evaluated_at_iso": iso_time(result.evaluated_at),
            "window": result.window, "allowed_lag": result.allowed_lag, "rules": result.rules.value,
            "groups": [json_row(row) for row in result.groups],
            "partitions": [json_row(row) for row in result.partitions],
            "skipped": result.skipped.to_json()}


def rebalances_document(result: "RebalancesResult") -> dict:
    return {"groups": [json_row(row) for row in result.groups],
            "timeline": [json_row(row) for row in result.timeline],
            "not_found": result.not_found,
            "skipped": result.skipped.to_json()}


def audit_document(result: "AuditResult") -> dict:
    return {"summary": [json_row(row) for row in result.summary],
            "violations": [json_row({**row, "records": [json.loads(record) for record in row["records"]]})
                           for row in result.violations],
            "skipped": result.skipped.to_json()}


def json_row(row: dict) -> dict:
    """A result row for JSON: `*_ts` fields gain an `*_ts_iso` twin; NaN and infinities become null."""
    document: dict[str, Any] = {}
    for key, value in row.items():
        document[key] = None if isinstance(value, float) and not math.isfinite(value) else value
        if key.endswith("_ts"):
            document[f"{key}_iso"] = iso_time(value)
    return document


def iso_time(ms: Optional[int]) -> Optional[str]:
    """Epoch ms -> "2025-11-21T18:03:12.345Z" (UTC, to the millisecond); None stays None."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# -- tables --------------------------------------------------------------------------------------


def warn_skipped(current: CliEnv, skipped: "Skipped", what: str) -> None:
    """One line on stderr when input rows were left out."""
    if skipped:
        current.err.print(f"groupctl: warning: skipped {skipped.malformed} malformed line(s) and "
                          f"{skipped.unsupported_version} row(s) of an unsupported schema version in the {what}",
                          markup=False, highlight=False)


def show_lag(current: CliEnv, result: "LagResult", *, all_partitions: bool) -> None:
    several_clusters = len({row["cluster"] for row in (*result.groups, *result.partitions)
                            if row["cluster"] is not None}) > 1
    cluster = ["CLUSTER"] if several_clusters else []
    title = f"Lag at {render.utc_time(result.evaluated_at)}" if result.evaluated_at is not None else "Lag"
    title += f" (window {result.window}, allowed lag {result.allowed_lag}, {result.rules.value} rules)"
    render.show(current, status_table(
        [*cluster, "GROUP", "STATUS", "PARTITIONS", "COMPLETE", "TOTAL-LAG", "MAX-LAG", "MAX-LAG-AT",
         "MAX-LAG-TIME", "TREND", "CATCH-UP"],
        [([row["cluster"]] if several_clusters else []) + [
            row["group"], row["status"], row["partitions"], percent(row["complete"]), row["total_lag"],
            row["max_lag"], f"{row['max_lag_topic']}/{row['max_lag_partition']}" if row["max_lag_topic"] else None,
            seconds(row["max_lag_seconds"]), trend(row["lag_trend"]),
            catch_up(row["catch_up_seconds"], row["total_lag"], row["status"])] for row in result.groups],
        title=title))
    shown = result.partitions if all_partitions else [row for row in result.partitions if row["status"] != "OK"]
    current.out.print()
    if shown:
        render.show(current, status_table(
            [*cluster, "GROUP", "TOPIC", "PARTITION", "STATUS", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
             "LAG-TIME", "CATCH-UP", "OWNER"],
            [([row["cluster"]] if several_clusters else []) + [
                row["group"], row["topic"], row["partition"], row["status"], row["committed"], row["log_end"],
                render.AHEAD_OF_LOG_END if row["ahead_of_log_end"] else row["current_lag"], lag_time(row),
                catch_up(row["catch_up_seconds"], row["current_lag"], row["status"]), row["owner"]] for row in shown]))
    hidden = len(result.partitions) - len(shown)
    if not shown and result.partitions:
        note(current, f"All {len(result.partitions)} partition(s) are OK (--all-partitions lists them).")
    elif hidden:
        note(current, f"{hidden} OK partition(s) not shown (--all-partitions lists them).")


def show_rebalances(current: CliEnv, result: "RebalancesResult", *, last: int) -> None:
    render.show(current, status_table(
        ["GROUP", "TYPE", "REBALANCES", "P50", "P95", "MAX", "STOPPED", "UNFINISHED", "JOINS", "LEAVES", "EXPIRED",
         "REASONS", "LAST"],
        [[row["group"], row["group_type"], row["rebalances"], millis(row["p50_ms"]), millis(row["p95_ms"]),
          millis(row["max_ms"]), millis(row["total_ms"]), row["unfinished"], row["joins"], row["leaves"],
          row["expirations"], reasons(row["reasons"]), render.utc_time(row["last_ts"])] for row in result.groups],
        title=f"Rebalances per group ({len(result.groups)} group(s))"))
    if result.not_found:
        note(current, f"No journal events for: {', '.join(result.not_found)}")
    recent = result.timeline[-last:] if last else []
    if recent:  # a consumer group's row is a group epoch: completed when the group was STABLE at it
        current.out.print()
        render.show(current, status_table(
            ["COMPLETED", "GROUP", "TYPE", "GENERATION", "DURATION", "REASON", "MEMBERS", "MOVED", "STATE", "NODE"],
            [[render.utc_time(row["completed_ts"]), row["group"], row["group_type"], row["generation"],
              millis(row["duration_ms"]), row["reason"], row["members"], row["moved"], row["state"], row["node"]]
             for row in recent],
            title=f"Timeline: the last {len(recent)} of {len(result.timeline)} rebalance(s)"))


def show_audit(current: CliEnv, result: "AuditResult") -> None:
    from rich.text import Text

    render.show(current, status_table(
        ["INVARIANT", "CHECKED", "VIOLATIONS", "UNVERIFIED"],
        [[row["invariant"], row["checked"],
          Text(str(row["violations"]), style="bold red" if row["violations"] else "green"), row["unverified"]]
         for row in result.summary],
        title="Audit of the coordinator journal"))
    for violation in result.violations:
        where = [f"group {violation['group']}"]
        if violation["generation"] is not None:
            where.append(f"generation {violation['generation']}")
        if violation["topic"] is not None:
            where.append(f"partition {violation['topic']}/{violation['partition']}")
        current.out.print()
        current.out.print(Text.assemble(("✗ " + violation["invariant"], "bold red"), "  ", "  ".join(where)))
        current.out.print(Text("  " + (violation["detail"] or "")))
        for record in violation["records"]:
            current.out.print(Text("    " + record, style="dim"), soft_wrap=True)
    current.out.print()
    count = result.violation_count
    note(current, f"{count} violation(s) found." if count else "No violations: every checked invariant holds.")


def status_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: Optional[str] = None) -> "Table":
    """`render.table` with the STATUS column coloured and `NUMERIC_COLUMNS` as numbers; cells that
    are already `Text` keep their style."""
    from rich.text import Text

    status = columns.index("STATUS") if "STATUS" in columns else None
    return render.table(columns, [[cell if isinstance(cell, Text) else styled(cell, index == status)
                                   for index, cell in enumerate(row)] for row in rows],
                        title=title, numeric=NUMERIC_COLUMNS)


def styled(cell: Any, is_status: bool) -> "Text":
    from rich.text import Text

    text = "-" if cell is None else str(cell)
    return Text(text, style=STATUS_STYLE.get(text, "")) if is_status else Text(text)


def note(current: CliEnv, message: str) -> None:
    current.out.print(message, markup=False, highlight=False)


# -- humanised values ----------------------------------------------------------------------------


def seconds(value: Optional[float]) -> Optional[str]:
    """A duration: "0s", "45s", "12m 03s", "3h 04m", "2d 05h"."""
    if value is None or not math.isfinite(value):
        return None
    whole = int(round(value))
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def millis(value: Optional[float]) -> Optional[str]:
    """A short duration: "850 ms", "12.3 s", then as `seconds`."""
    if value is None or not math.isfinite(value):
        return None
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    return seconds(value / 1000)


def lag_time(row: dict) -> Optional[str]:
    """How old the oldest unconsumed message is; "≥" when it predates the recording."""
    text = seconds(row["lag_seconds"])
    return f"≥{text}" if text is not None and row["lag_seconds_is_lower_bound"] else text


def catch_up(value: Optional[float], lag: Optional[int], status: str) -> Optional[str]:
    """Time to catch up at the current rates; "never" for a lagging, not-OK partition or group that
    is not catching up (a small steady lag of an OK one is not worth the alarm)."""
    if value is None:
        return "never" if lag and status != "OK" else None
    return seconds(value)


def trend(value: Optional[float]) -> Optional[str]:
    """Messages/s by which lag grows (+) or shrinks (-): "+1,250.0/s", "-0.083/s", "0/s"."""
    if value is None or not math.isfinite(value):
        return None
    if value == 0:
        return "0/s"
    return f"{value:+,.1f}/s" if abs(value) >= 1 else f"{value:+.2g}/s"


def percent(value: Optional[float]) -> Optional[str]:
    return None if value is None or not math.isfinite(value) else f"{value:.0%}"


def reasons(counts: Optional[dict]) -> Optional[str]:
    """{"join": 3, "leave": 1} -> "join 3, leave 1" (most frequent first)."""
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{reason} {count}" for reason, count in ranked)
