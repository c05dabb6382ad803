"""`groupctl.lag.notify`: an incident opens when a group's status reaches the threshold, is updated
once per change of status, and closes once when the group recovers or is gone; nothing repeats."""

from __future__ import annotations

from groupctl.lag.notify import Incidents, NotifyThreshold

G = ("local", "billing")


def events(incidents: Incidents, *statuses: str) -> list[tuple[str, str, str]]:
    """(event, previous, status) of every change over one evaluation per status (None: the group is gone)."""
    seen = []
    for now, status in enumerate(statuses):
        for change in incidents.observe({} if status is None else {G: status}, now):
            seen.append((change.event, change.previous, change.status))
    return seen


def test_an_incident_opens_once_updates_once_per_change_and_closes_once():
    incidents = Incidents(NotifyThreshold.WARN)
    assert events(incidents, "OK", "WARN", "WARN", "ERR", "ERR", "ERR", "WARN", "OK", "OK") == [
        ("open", "OK", "WARN"), ("update", "WARN", "ERR"), ("update", "ERR", "WARN"), ("close", "WARN", "OK")]


def test_an_incident_keeps_its_id_and_start_from_open_to_close():
    incidents = Incidents(NotifyThreshold.ERR)
    changes = [change for now, status in enumerate(["OK", "ERR", "ERR", "OK"])
               for change in incidents.observe({G: status}, 1000 * now)]
    assert [c.event for c in changes] == ["open", "close"]
    assert changes[0].id == changes[1].id == "local/billing/1000" and {c.start for c in changes} == {1000}
    assert [c.at for c in changes] == [1000, 3000]


def test_at_the_err_threshold_warn_is_not_an_incident_and_a_drop_from_err_to_warn_closes_it():
    incidents = Incidents(NotifyThreshold.ERR)
    assert events(incidents, "WARN", "ERR", "WARN", "WARN") == [("open", "WARN", "ERR"), ("close", "ERR", "WARN")]


def test_a_group_that_is_gone_closes_its_incident_as_notfound_and_a_new_one_opens_when_it_is_back():
    incidents = Incidents(NotifyThreshold.WARN)
    assert events(incidents, "ERR", None, None, "ERR") == [
        ("open", "NOTFOUND", "ERR"), ("close", "ERR", "NOTFOUND"), ("open", "NOTFOUND", "ERR")]


def test_a_group_first_seen_bad_opens_an_incident_and_one_first_seen_ok_says_nothing():
    assert events(Incidents(NotifyThreshold.WARN), "OK", "OK") == []
    assert events(Incidents(NotifyThreshold.WARN), "ERR") == [("open", "NOTFOUND", "ERR")]
