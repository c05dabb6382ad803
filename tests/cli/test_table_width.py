"""Tables fit the terminal: on an 80-column terminal every row is one line no wider than 80,
text columns (ids, hosts, names) are cut with an ellipsis and numbers, states and times never
are; piped, every value prints whole (the width of `context.PIPED_WIDTH`).

The describe tests run against a real in-process coordinator with a group of two real
kafka-python consumers, whose member ids are their client id and a 36-character UUID, and
whose committed offsets name their owners."""

from __future__ import annotations

import io
import json
import re

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from rich.console import Console
from typer.testing import CliRunner

from groupctl.cli import analyze_render, render
from groupctl.cli.app import app
from groupctl.cli.context import CliEnv
from tests.support.consumer_groups import produce
from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

GROUP, TOPIC, PARTITIONS = "width", "wt", 4
NUMBER = re.compile(r"(?<!\S)\d+(?!\S)")  # a cell of digits (not the port in "host:port")


def terminal(width: int) -> tuple[CliEnv, io.StringIO]:
    screen = io.StringIO()
    return CliEnv(out=Console(file=screen, width=width, force_terminal=True, color_system=None, soft_wrap=True),
                  err=Console(file=io.StringIO())), screen


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


HEADER_LINE = re.compile(r"[A-Z#()\-\s…]+")


def data_rows(shown: list[str]) -> list[str]:
    """The lines that are not table headers (a header may take two lines on a narrow terminal)."""
    return [line for line in shown if not HEADER_LINE.fullmatch(line)]


def shown_headers(shown: list[str]) -> list[str]:
    return [word for line in shown if HEADER_LINE.fullmatch(line) for word in line.split()]


@pytest.fixture(scope="module")
def node():
    running = InProcessCoordinator(node_config()).start()
    consumers: list[ConsumerProcess] = []
    try:
        admin = AdminClient({"bootstrap.servers": running.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(15)
        produce(running.bootstrap, TOPIC, PARTITIONS, [f"m{i}" for i in range(2 * PARTITIONS)])
        consumers = [ConsumerProcess("kafka-python", running.bootstrap, GROUP, TOPIC, client_id=f"width-reader-{i}")
                     for i in (1, 2)]
        wait_until(lambda: settled(running.bootstrap), 60, message="two members owning and committing every partition")
        yield running
    finally:
        for consumer in consumers:
            consumer.stop()
        running.stop()


def describe_json(bootstrap: str) -> dict:
    result = CliRunner().invoke(app, ["--bootstrap", bootstrap, "--output", "json", "group", "describe", GROUP],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def settled(bootstrap: str):
    if CliRunner().invoke(app, ["--bootstrap", bootstrap, "group", "list"]).stdout.count(GROUP) == 0:
        return None
    described = describe_json(bootstrap)
    owned = sum(len(ps) for m in described["members"] for ps in m["assignment"].values())
    committed = [o for o in described["offsets"] if o["committed_offset"] == 2]
    ready = described["state"] == "Stable" and len(described["members"]) == 2 and owned == PARTITIONS
    return described if ready and len(committed) == PARTITIONS else None


def describe(bootstrap: str, obj: CliEnv | None = None) -> str:
    result = CliRunner().invoke(app, ["--bootstrap", bootstrap, "group", "describe", GROUP], obj=obj,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_on_an_80_column_terminal_describe_rows_are_single_lines_with_ids_cut_by_an_ellipsis(node):
    member_ids = [m["member_id"] for m in describe_json(node.bootstrap)["members"]]
    assert all(len(member_id) > 36 for member_id in member_ids)
    current, screen = terminal(80)
    describe(node.bootstrap, obj=current)
    shown, piped = lines(screen.getvalue()), lines(describe(node.bootstrap))

    assert max(len(line) for line in shown) <= 80, screen.getvalue()
    assert len(data_rows(shown)) == len(data_rows(piped)), "a row wrapped onto a second line:\n" + screen.getvalue()
    assert "…" in screen.getvalue()
    assert not any(member_id in screen.getvalue() for member_id in member_ids)
    assert "CURRENT-" in shown_headers(shown) and "OFFSET" in shown_headers(shown)  # a number column's header, broken
    for on_screen, whole in zip(data_rows(shown), data_rows(piped)):  # numbers are never cut
        assert NUMBER.findall(on_screen) == NUMBER.findall(whole), (on_screen, whole)
    assert "Stable" in screen.getvalue()


def test_piped_describe_prints_every_member_id_whole(node):
    described = describe_json(node.bootstrap)
    output = describe(node.bootstrap)
    for member in described["members"]:
        assert member["member_id"] in output
    assert "…" not in output


def test_numbers_states_and_times_are_never_cut_and_text_columns_are_cut_widest_first():
    current, screen = terminal(80)
    long_id = "reader-0123456789-" + "f" * 36
    render.show(current, render.table(
        ["GROUP", "STATE", "CONSUMER-ID", "HOST", "LAG", "STARTED"],
        [("orders", "PreparingRebalance", long_id, "/10.1.2.3", 98765, "2025-11-21T18:03:12Z")]))
    header, row = lines(screen.getvalue())
    assert len(header) <= 80 and len(row) <= 80
    for whole in ("PreparingRebalance", "98765", "2025-11-21T18:03:12Z", "orders", "/10.1.2.3"):
        assert whole in row, row
    assert "reader-" in row and long_id not in row and "…" in row


def test_numbers_wider_together_than_the_terminal_still_print_whole_on_one_line():
    current, screen = terminal(40)
    render.show(current, render.table(
        ["CONSUMER-ID", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "#PARTITIONS"],
        [("reader-" + "f" * 36, 123456789012, 123456789999, 987, 12)]))
    (row,) = data_rows(lines(screen.getvalue()))
    assert NUMBER.findall(row) == ["123456789012", "123456789999", "987", "12"], row


def test_analyze_tables_follow_the_same_rule_with_their_own_numeric_columns():
    current, screen = terminal(60)
    render.show(current, analyze_render.status_table(
        ["GROUP", "STATUS", "TOTAL-LAG", "TREND", "CATCH-UP"],
        [("a-consumer-group-with-a-rather-long-name-" + "x" * 20, "WARN", 1234567, "+1,250.0/s", "3h 04m")]))
    *headers, row = lines(screen.getvalue())
    assert len(row) <= 60
    for whole in ("WARN", "1234567", "+1,250.0/s", "3h 04m"):
        assert whole in row, row
    assert "…" in row
    assert "TOTAL-" in headers[0]  # the header of a number column, broken after its hyphen, over "LAG"
    assert re.search(r"LAG\s*$", headers[-1].split("TREND")[0])  # right-aligned: the header ends its column


def test_a_piped_console_prints_long_values_whole():
    screen = io.StringIO()
    current = CliEnv(out=Console(file=screen, width=100_000), err=Console(file=io.StringIO()))
    long_id = "reader-" + "f" * 200
    render.show(current, render.table(["CONSUMER-ID", "LAG"], [(long_id, 5)]))
    assert long_id in screen.getvalue() and "…" not in screen.getvalue()
