"""When `groupctl lag serve` notifies: a group's status crossing a threshold opens an incident, a
change of status while it is open updates it, and a return below the threshold closes it.

Unlike Burrow's notifier, which repeats an open incident every interval, each change is told once:
a webhook receiver sees one `open`, one `update` per change of status, and one `close`.

Invariants:
- An incident is per (cluster, group); its `id` and `start` stay the same from open to close, a
  restart included when the new `Incidents` resumes the old one's `open_incidents`.
- A group at or above the threshold (`warn`: WARN or ERR; `err`: ERR) with no incident opens one;
  with one, a different status updates it; below the threshold it closes. A group that is no longer
  known (deleted, or its offsets expired) closes its incident with status NOTFOUND.
- Statuses are observed in evaluation order; nothing here reads a clock (`now` is the caller's).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Mapping

from groupctl.lag.live import GroupKey


class NotifyThreshold(str, Enum):
    """From which group status an incident opens (`lag serve --notify-threshold`)."""

    WARN = "warn"
    ERR = "err"

    def reached_by(self, status: str) -> bool:
        return status == "ERR" or (self is NotifyThreshold.WARN and status == "WARN")


@dataclass(frozen=True)
class Change:
    """One notification: `event` is open, update or close."""

    event: str
    cluster: str
    group: str
    status: str
    previous: str
    id: str
    start: int  # when the incident opened (evaluation time, ms)
    at: int  # this evaluation's time (ms)


@dataclass(frozen=True)
class _Incident:
    id: str
    start: int
    status: str


class Incidents:
    """The open incidents, and the changes each evaluation brings (see the module docstring)."""

    def __init__(self, threshold: NotifyThreshold) -> None:
        self.threshold = threshold
        self._open: dict[GroupKey, _Incident] = {}
        self._last: dict[GroupKey, str] = {}

    def open_incidents(self) -> list[dict]:
        """The open incidents as JSON objects (cluster, group, id, start, status), for `resume`."""
        return [{"cluster": cluster, "group": group, "id": incident.id, "start": incident.start,
                 "status": incident.status} for (cluster, group), incident in sorted(self._open.items())]

    def resume(self, incidents: Iterable[Mapping], statuses: Mapping[GroupKey, str]) -> None:
        """Take back incidents another `Incidents` had open (`open_incidents`), as told, with every
        group's status as it last saw them (`statuses`): the next observation updates or closes
        them under their own ids, and names the right previous status."""
        self._last = dict(statuses)
        for entry in incidents:
            key = (entry["cluster"], entry["group"])
            self._open[key] = _Incident(entry["id"], entry["start"], entry["status"])
            self._last[key] = entry["status"]

    def observe(self, statuses: Mapping[GroupKey, str], now: int) -> list[Change]:
        """The changes of this evaluation, given every known group's status at `now`."""
        changes = []
        for key in sorted(set(statuses) | set(self._open)):
            status = statuses.get(key, "NOTFOUND")
            previous = self._last.get(key, "NOTFOUND")
            incident = self._open.get(key)
            if self.threshold.reached_by(status):
                if incident is None:
                    incident = self._open[key] = _Incident(f"{key[0]}/{key[1]}/{now}", now, status)
                    changes.append(self._change("open", key, status, previous, incident, now))
                elif status != incident.status:
                    incident = self._open[key] = _Incident(incident.id, incident.start, status)
                    changes.append(self._change("update", key, status, previous, incident, now))
            elif incident is not None:
                del self._open[key]
                changes.append(self._change("close", key, status, previous, incident, now))
        self._last = dict(statuses)
        return changes

    @staticmethod
    def _change(event: str, key: GroupKey, status: str, previous: str, incident: _Incident, now: int) -> Change:
        return Change(event, key[0], key[1], status, previous, incident.id, incident.start, now)
