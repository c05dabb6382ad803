"""`lag serve`'s incidents across a restart: kept beside the dataset (`ops.lag_incidents`),
resumed by `Incidents.resume` when `LagService.restore` rebuilds the windows, so that a `close`
carries the id of the `open` a receiver got before the restart."""

from __future__ import annotations

import json

import pytest

from groupctl.errors import OpsError
from groupctl.lag.live import LiveLag
from groupctl.lag.notify import Incidents, NotifyThreshold
from groupctl.ops.lag_dataset import LagDatasetWriter
from groupctl.ops.lag_incidents import FILE_NAME, load_incidents, save_incidents
from groupctl.ops.lag_record import LagRow, RoundSample
from groupctl.ops.lag_schedule import RoundOutcome
from groupctl.ops.lag_serve import LagService
from tests.support.lag_histories import T0, at

KEY = ("local", "orders")


def stuck_rows(group: str = "orders") -> list[LagRow]:
    """Three rounds of a consumer that holds its partition and commits nothing while messages wait: ERR."""
    return [LagRow(at(s), "local", group, "events", 0, 5, 5 + 10 * s, "Stable", 1, "app") for s in (1, 2, 3)]


def caught_up_rows(group: str = "orders") -> list[LagRow]:
    return [LagRow(at(s), "local", group, "events", 0, 100 + s, 100 + s, "Stable", 1, "app") for s in (1, 2, 3)]


def service(now_s: float) -> LagService:
    return LagService(LiveLag(window=3, history_ms=3_600_000), cluster="local", groups=None,
                      incidents=Incidents(NotifyThreshold.ERR), wall_ms=lambda: at(now_s))


def dataset(tmp_path, rows: list[LagRow]):
    LagDatasetWriter(tmp_path).write_round(rows)
    return tmp_path


def test_a_resumed_incident_is_not_opened_again_and_closes_under_its_own_id():
    before = Incidents(NotifyThreshold.ERR)
    [opened] = before.observe({KEY: "ERR"}, now=T0)
    after = Incidents(NotifyThreshold.ERR)
    after.resume(before.open_incidents(), {KEY: "ERR"})
    assert after.observe({KEY: "ERR"}, now=T0 + 1000) == []
    [closed] = after.observe({KEY: "OK"}, now=T0 + 2000)
    assert (closed.event, closed.id, closed.start, closed.previous) == ("close", opened.id, opened.start, "ERR")


def test_a_restart_keeps_the_incident_open_before_it_and_closes_it_under_the_same_id(tmp_path):
    root = dataset(tmp_path, stuck_rows())
    first = service(now_s=60)
    assert first.restore(root) == 3  # no incidents kept yet: what the windows showed was told
    [opened] = first.incidents.open_incidents()

    second = service(now_s=61)
    assert second.restore(root) == 3
    assert second.incidents.open_incidents() == [opened]
    still_stuck = LagRow(at(4), "local", "orders", "events", 0, 5, 45, "Stable", 1, "app")
    assert second.absorb(round_of([still_stuck])).changes == ()  # still ERR: nothing to tell
    [closed] = second.incidents.observe({KEY: "OK"}, now=at(62))
    assert (closed.event, closed.id, closed.start) == ("close", opened["id"], opened["start"])


def test_an_incident_that_ended_while_no_server_ran_is_closed_at_the_first_round(tmp_path):
    save_incidents(tmp_path, [{"cluster": "local", "group": "orders", "id": "local/orders/1", "start": 1,
                               "status": "ERR"}])
    restarted = service(now_s=60)
    assert restarted.restore(dataset(tmp_path, caught_up_rows())) == 3
    [closed] = restarted.absorb(round_of([LagRow(at(60), "local", "orders", "events", 0, 104, 104, "Stable", 1,
                                                 "app")])).changes
    assert (closed.event, closed.id, closed.status, closed.previous) == ("close", "local/orders/1", "OK", "ERR")
    assert load_incidents(tmp_path).open == []


def test_an_incident_that_began_while_no_server_ran_is_opened_at_the_first_round(tmp_path):
    save_incidents(tmp_path, [])
    restarted = service(now_s=60)
    restarted.restore(dataset(tmp_path, stuck_rows()))
    [opened] = restarted.absorb(round_of([LagRow(at(60), "local", "orders", "events", 0, 5, 95, "Stable", 1,
                                                 "app")])).changes
    assert (opened.event, opened.group, opened.status) == ("open", "orders", "ERR")
    assert [entry["id"] for entry in load_incidents(tmp_path).open] == [opened.id]


def test_an_outage_is_not_taken_for_consumers_that_stopped(tmp_path):
    save_incidents(tmp_path, [])
    restarted = service(now_s=3_000)  # the server was down for most of an hour
    restarted.restore(dataset(tmp_path, caught_up_rows()))
    busy = LagRow(at(3_000), "local", "orders", "events", 0, 900, 905, "Stable", 1, "app")  # lagging a little, live
    evaluated = restarted.absorb(round_of([busy]))
    assert evaluated.changes == () and evaluated.evaluation.groups[KEY]["status"] == "OK"


def round_of(rows: list[LagRow]) -> RoundOutcome:
    return RoundOutcome(1, RoundSample(tuple(rows), 1, ()), None, None, 0.1, 0)


def test_a_round_that_changes_an_incident_rewrites_the_kept_file_whole(tmp_path):
    root = dataset(tmp_path, caught_up_rows())
    now = [60.0]
    watched = LagService(LiveLag(window=3, history_ms=3_600_000), cluster="local", groups=None,
                         incidents=Incidents(NotifyThreshold.ERR), wall_ms=lambda: at(now[0]))
    watched.restore(root)
    assert json.loads((root / FILE_NAME).read_text()) == {"v": 1, "open": [], "pending": []}
    changes = []
    for second in (61, 62, 63, 64):  # the consumer stops committing while messages wait
        now[0] = second
        evaluated = watched.absorb(round_of([LagRow(at(second), "local", "orders", "events", 0, 103, 103 + second,
                                                    "Stable", 1, "app")]))
        assert evaluated.warning is None
        changes.extend(evaluated.changes)
    [opened] = changes
    assert opened.event == "open"
    assert [(entry["group"], entry["id"]) for entry in load_incidents(root).open] == [("orders", opened.id)]
    assert [path.name for path in root.iterdir() if path.name.startswith(".")] == []


def test_no_kept_file_is_nothing_known_and_a_foreign_one_is_a_one_line_error(tmp_path):
    assert load_incidents(tmp_path) is None
    (tmp_path / FILE_NAME).write_text('{"v": 2, "open": []}')
    with pytest.raises(OpsError, match="does not hold lag serve's open incidents"):
        load_incidents(tmp_path)
    (tmp_path / FILE_NAME).write_text("{not json")
    with pytest.raises(OpsError, match="cannot read the open incidents"):
        load_incidents(tmp_path)


def test_a_kept_file_that_cannot_be_written_is_a_warning_and_the_round_still_counts(tmp_path, monkeypatch):
    watched = service(now_s=60)
    watched.restore(dataset(tmp_path, caught_up_rows()))

    def refuse(root, incidents, pending):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("groupctl.ops.lag_serve.save_incidents", refuse)
    watched.incidents.resume([{"cluster": "local", "group": "orders", "id": "local/orders/1", "start": 1,
                               "status": "ERR"}], {KEY: "ERR"})
    evaluated = watched.absorb(round_of([LagRow(at(61), "local", "orders", "events", 0, 104, 104, "Stable", 1, "app")]))
    assert [change.event for change in evaluated.changes] == ["close"]
    assert "cannot keep the open incidents" in evaluated.warning and "No space left" in evaluated.warning
    assert watched.latest is evaluated.evaluation


def test_a_restart_long_after_the_last_round_still_has_full_windows_and_keeps_a_dead_groups_incident(tmp_path):
    root = dataset(tmp_path, stuck_rows())
    first = service(now_s=4)
    first.restore(root)
    [opened] = first.incidents.open_incidents()
    restarted = LagService(LiveLag(window=3, history_ms=60_000), cluster="local", groups=None,
                           incidents=Incidents(NotifyThreshold.ERR), wall_ms=lambda: at(3_000))  # down for 50 min
    assert restarted.restore(root) == 3  # the rows of the history before the newest one, not before now
    still_stuck = LagRow(at(3_000), "local", "orders", "events", 0, 5, 900, "Stable", 1, "app")
    evaluated = restarted.absorb(round_of([still_stuck]))
    assert evaluated.changes == () and evaluated.evaluation.groups[KEY]["status"] == "ERR"
    assert restarted.incidents.open_incidents() == [opened]


def test_incidents_of_groups_a_restart_does_not_watch_are_kept_as_they_are_not_closed(tmp_path):
    other = {"cluster": "local", "group": "billing", "id": "local/billing/1", "start": 1, "status": "ERR"}
    elsewhere = {**other, "cluster": "eu", "id": "eu/billing/1"}
    save_incidents(tmp_path, [other, elsewhere])
    watching_orders = LagService(LiveLag(window=3, history_ms=3_600_000), cluster="local", groups=["orders"],
                                 incidents=Incidents(NotifyThreshold.ERR), wall_ms=lambda: at(60))
    watching_orders.restore(dataset(tmp_path, caught_up_rows()))
    evaluated = watching_orders.absorb(round_of([LagRow(at(60), "local", "orders", "events", 0, 104, 104, "Stable",
                                                        1, "app")]))
    assert evaluated.changes == ()
    assert sorted(e["id"] for e in load_incidents(tmp_path).open) == ["eu/billing/1", "local/billing/1"]


def test_after_a_restart_a_change_names_the_status_the_last_run_saw_as_previous(tmp_path):
    save_incidents(tmp_path, [])
    restarted = service(now_s=60)
    restarted.restore(dataset(tmp_path, caught_up_rows()))
    rewound = LagRow(at(60), "local", "orders", "events", 0, 50, 110, "Stable", 1, "app")  # REWIND: ERR at once
    [opened] = restarted.absorb(round_of([rewound])).changes
    assert (opened.event, opened.status, opened.previous) == ("open", "ERR", "OK")


def test_notifications_not_posted_at_the_end_are_kept_and_handed_to_the_next_run(tmp_path):
    root = dataset(tmp_path, caught_up_rows())
    ending = service(now_s=60)
    ending.restore(root)
    unposted = [{"event": "open", "id": "local/orders/7", "cluster": "local", "group": "orders"}]
    assert ending.keep_unposted(unposted) is None
    restarted = service(now_s=61)
    restarted.restore(root)
    assert restarted.pending == unposted
