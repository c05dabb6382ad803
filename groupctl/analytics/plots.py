"""PNG pictures of analysis results (`analyze lag --plot`, `analyze rebalances --plot`).

Inputs are the collected result rows of `jobs` (plain dicts), never DataFrames. matplotlib is
imported inside the functions (it is slow to import and only needed for --plot) and drawn through
the Agg canvas on a `Figure` of its own: no pyplot, no global backend switch, no GUI, nothing left
behind between calls. Every time axis is in UTC, as are the datasets.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_LAG_LINES = 8
"""Lag lines in one picture: more would be unreadable."""
MAX_TIMELINE_ROWS = 30
"""Groups in one rebalance timeline (those with the most rebalances)."""
LOG_SCALE_RATIO = 100
"""Lag plots switch to a log scale when the largest lag is this many times the smallest nonzero one."""
MIN_BAR_FRACTION = 0.004
"""A rebalance bar is drawn at least this fraction of the time axis wide (rebalances take seconds;
the timeline spans hours), so each one stays visible."""
DPI = 120

STATUS_STYLE = {"ERR": "-", "WARN": "--", "OK": ":"}
"""Line style by group status, so severity reads without the legend (colour tells groups apart)."""


def plot_lag(history: Sequence[dict], groups: Sequence[dict], path: str, *, window: int,
             evaluated_at: Optional[int]) -> None:
    """Total lag over time of each group in `history` (cluster, group, ts, total_lag rows), at most
    MAX_LAG_LINES, in the order of `groups` (worst first), labelled with their status."""
    figure, axes = _figure(width=11, height=5.5)
    series: dict[tuple, list[tuple[datetime, float]]] = defaultdict(list)
    for row in history:  # an unknown lag (null) is a gap in the line, not a zero
        lag = row["total_lag"]
        series[(row["cluster"], row["group"])].append((_utc(row["ts"]), math.nan if lag is None else lag))
    order = [(row["cluster"], row["group"]) for row in groups if (row["cluster"], row["group"]) in series]
    status = {(row["cluster"], row["group"]): row["status"] for row in groups}
    several_clusters = len({cluster for cluster, _ in order}) > 1
    for key in order[:MAX_LAG_LINES]:
        times, lags = zip(*series[key])
        name = f"{key[0]}/{key[1]}" if several_clusters else key[1]
        axes.plot(times, lags, STATUS_STYLE.get(status[key], "-"), linewidth=1.8,
                  marker="." if len(times) < 40 else None, label=f"{name}  [{status[key]}]")
    when = f" at {_utc(evaluated_at):%Y-%m-%d %H:%M:%S} UTC" if evaluated_at is not None else ""
    shown = min(len(order), MAX_LAG_LINES)
    figure.suptitle("Consumer lag of the worst groups" if shown > 1 else "Consumer lag", fontsize=14,
                    fontweight="bold", x=0.01, ha="left")
    axes.set_title(f"{shown} of {len(groups)} group(s); status evaluated{when} over a window of {window} commits",
                   fontsize=10, loc="left", color="dimgray")
    if not order:
        _empty(axes, "no lag samples to plot")
    else:
        all_lags = [lag for key in order[:MAX_LAG_LINES] for _, lag in series[key]]
        positive = [lag for lag in all_lags if lag > 0]
        if positive and max(positive) >= LOG_SCALE_RATIO * min(positive):
            axes.set_yscale("symlog", linthresh=1)  # symlog, not log: a lag of 0 stays on the chart
            axes.set_ylabel("total lag (messages, log scale)")
        else:
            axes.set_ylim(bottom=0)
            axes.set_ylabel("total lag (messages)")
            axes.yaxis.set_major_formatter(_thousands())
        _time_axis(axes)
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9, frameon=False,
                    title="group  [status]", title_fontsize=9)
    _save(figure, path)


def plot_rebalances(timeline: Sequence[dict], path: str) -> None:
    """One row per group, one bar per completed rebalance from its start to its completion (for a
    consumer group: an epoch, to when the group was STABLE at it), coloured by reason; the
    MAX_TIMELINE_ROWS groups with the most rebalances. Epochs that never settled are left out."""
    timeline = [row for row in timeline if row["completed_ts"] is not None]
    counts = Counter(row["group"] for row in timeline)
    groups = sorted(group for group, _ in counts.most_common(MAX_TIMELINE_ROWS))
    figure, axes = _figure(width=12, height=1.8 + 0.42 * max(len(groups), 2))
    figure.suptitle("Rebalances by group", fontsize=14, fontweight="bold", x=0.01, ha="left")
    rows = [row for row in timeline if row["group"] in set(groups)]
    total_ms = sum(row["duration_ms"] or 0 for row in rows)
    axes.set_title(f"{len(rows)} rebalance(s) in {len(groups)} of {len(counts)} group(s), {_seconds(total_ms)} "
                   f"stopped in total; a bar spans a rebalance's start to completion (widened to stay visible)",
                   fontsize=10, loc="left", color="dimgray")
    if not rows:
        _empty(axes, "no completed rebalances to plot")
        _save(figure, path)
        return
    from matplotlib import colormaps
    from matplotlib.dates import date2num
    from matplotlib.patches import Patch

    starts = [date2num(_utc(row["started_ts"] if row["started_ts"] is not None else row["completed_ts"]))
              for row in rows]
    ends = [date2num(_utc(row["completed_ts"])) for row in rows]
    span = max(max(ends) - min(starts), 1 / 86_400)  # days; at least one second
    min_width = span * MIN_BAR_FRACTION
    reasons = Counter(row["reason"] or "unknown" for row in rows)
    palette = colormaps["tab10"]
    colour = {reason: palette(index % 10) for index, (reason, _) in enumerate(reasons.most_common())}
    for row, start, end in zip(rows, starts, ends):
        y = groups.index(row["group"])
        axes.broken_barh([(start, max(end - start, min_width))], (y - 0.35, 0.7),
                         facecolors=colour[row["reason"] or "unknown"], edgecolor="none")
    stopped: Counter = Counter()
    for row in rows:
        stopped[row["group"]] += row["duration_ms"] or 0
    axes.set_yticks(range(len(groups)), fontsize=9,
                    labels=[f"{group}  ({counts[group]}×, {_seconds(stopped[group])})" for group in groups])
    axes.set_ylim(len(groups) - 0.5, -0.5)
    axes.set_ylabel("group")
    axes.set_xlim(min(starts) - span * 0.02, max(ends) + span * 0.02)
    axes.xaxis_date(tz=timezone.utc)
    _time_axis(axes)
    axes.grid(axis="y", visible=False)
    axes.legend(handles=[Patch(color=colour[reason], label=f"{reason} ({count})")
                         for reason, count in reasons.most_common()],
                loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9, frameon=False, title="reason (count)",
                title_fontsize=9)
    _save(figure, path)


def _figure(*, width: float, height: float) -> "tuple[Figure, Axes]":
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.grid(True, color="#dddddd", linewidth=0.8)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    return figure, axes


def _time_axis(axes: "Axes") -> None:
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(tz=timezone.utc)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=timezone.utc))
    axes.set_xlabel("time (UTC)")


def _thousands():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _position: f"{value:,.0f}")


def _empty(axes: "Axes", message: str) -> None:
    axes.text(0.5, 0.5, message, transform=axes.transAxes, ha="center", va="center", fontsize=12, color="dimgray")
    axes.set_axis_off()


def _save(figure: "Figure", path: str) -> None:
    figure.savefig(path, format="png")


def _seconds(ms: int) -> str:
    return f"{ms / 1000:,.1f} s"


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
