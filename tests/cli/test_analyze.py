"""`groupctl analyze lag|rebalances|audit` in-process (CliRunner) on the test run's SparkSession.

Inputs are written to tmp_path as JSON Lines, laid out as `groupctl lag record` and the
coordinator write them (the formats docs/lag-and-rebalances.md documents). The commands find the
`spark` fixture's session running and reuse it (leaving it running), so a test costs a few Spark jobs, not a JVM start.
Bad input that needs no Spark (options, times) is rejected before any session exists.

The lag dataset: eight rounds ten minutes apart, from 2025-11-21T05:00Z, of
- `healthy`: two partitions committing up to (about) the log end: OK;
- `slow`: partition 0 commits but falls further behind every round: WARN;
- `stuck`: committed offset never moves while the log grows: STALL, so the group is ERR;
- `re[wound]` (a name that is rich markup if not escaped): its offset goes back in round 7: REWIND.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from groupctl.cli.app import app
from tests.support.cli import assert_one_line_error
from tests.support.journal_events import Journal

T0 = 1763701200000  # 2025-11-21T05:00:00Z
ROUND_MS = 600_000
HOUR_MS = 3_600_000
ROUNDS = 8
LAST_ROUND = T0 + (ROUNDS - 1) * ROUND_MS
MASTER = ["--master", "local[2]"]
GROUP_KEYS = ["cluster", "group", "status", "partitions", "complete", "total_lag", "max_lag", "max_lag_topic",
              "max_lag_partition", "max_lag_seconds", "catch_up_seconds", "lag_trend", "worst", "evaluated_at"]
PARTITION_KEYS = ["cluster", "group", "topic", "partition", "status", "complete", "committed", "log_end",
                  "current_lag", "ahead_of_log_end", "lag_seconds", "lag_seconds_is_lower_bound", "consume_rate", "produce_rate",
                  "lag_trend", "catch_up_seconds", "window_start_ts", "window_end_ts", "last_sample_ts", "owner",
                  "evaluated_at"]


# -- inputs --------------------------------------------------------------------------------------


def sample(ts: int, group: str, partition: int, committed, log_end, members=1, **fields) -> dict:
    return {"v": 1, "ts": ts, "cluster": "local", "group": group, "topic": "orders", "partition": partition,
            "committed": committed, "log_end": log_end, "state": "Stable", "members": members,
            "owner": f"{group}-client", **fields}


def write_lag_dataset(root: Path, rows: list[dict], *, extra_lines: tuple[str, ...] = ()) -> Path:
    """`rows` as `lag record` files them: one file per round under date=YYYY-MM-DD/hour=HH (UTC);
    `extra_lines` go into the first round's file as they are."""
    rounds: dict[int, list[str]] = {}
    for row in rows:
        rounds.setdefault(row["ts"], []).append(json.dumps(row, separators=(",", ":")))
    for index, (ts, lines) in enumerate(sorted(rounds.items())):
        moment = datetime.fromtimestamp(ts / 1000, tz=timezone.utc)
        directory = root / f"date={moment:%Y-%m-%d}" / f"hour={moment:%H}"
        directory.mkdir(parents=True, exist_ok=True)
        first_round_extras = list(extra_lines) if index == 0 else []
        (directory / f"part-{ts}-1-0.jsonl").write_text("\n".join([*lines, *first_round_extras]) + "\n")
    return root


def lag_rows() -> list[dict]:
    rows = []
    for i in range(ROUNDS):
        ts = T0 + i * ROUND_MS
        rows += [sample(ts, "healthy", 0, 100 * i, 100 * i), sample(ts, "healthy", 1, 50 * i, 50 * i),
                 sample(ts, "slow", 0, 10 * i, 30 * i), sample(ts, "slow", 1, 10 * i, 10 * i),
                 sample(ts, "stuck", 0, 10, 10 + 100 * i),
                 sample(ts, "re[wound]", 0, 500 + i - (400 if i == ROUNDS - 1 else 0), 1000)]
    return rows


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return write_lag_dataset(tmp_path_factory.mktemp("lag"), lag_rows())


def write_journal(directory: Path, journal: Journal) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "events-00000001.jsonl").write_text(
        "".join(json.dumps(event, separators=(",", ":")) + "\n" for event in journal.events))
    return directory


def clean_journal() -> Journal:
    """`orders`: a-1 joins, b-1 joins, b-1 leaves; each owner commits its partitions, offsets go up."""
    journal = Journal("orders")
    journal.joined(T0, "a-1", 0)
    journal.started(T0 + 10, 0, members=1)
    journal.completed(T0 + 1_510, 1, started_ts=T0 + 10, owners={"a-1": ["orders/0", "orders/1"]})
    journal.commit(T0 + 30_000, "a-1", 1, "orders/0", 10)
    journal.joined(T0 + 60_000, "b-1", 1)
    journal.started(T0 + 60_000, 1, members=2)
    journal.completed(T0 + 62_000, 2, started_ts=T0 + 60_000, owners={"a-1": ["orders/0"], "b-1": ["orders/1"]})
    journal.commit(T0 + 90_000, "a-1", 2, "orders/0", 20)
    journal.commit(T0 + 90_001, "b-1", 2, "orders/1", 5)
    journal.left(T0 + 120_000, "b-1", 2)
    journal.started(T0 + 120_000, 2, reason="leave", members=1)
    journal.completed(T0 + 120_900, 3, started_ts=T0 + 120_000, reason="leave",
                      owners={"a-1": ["orders/0", "orders/1"]})
    return journal


@pytest.fixture(scope="module")
def journal_dir(tmp_path_factory) -> Path:
    return write_journal(tmp_path_factory.mktemp("journal") / "node-1", clean_journal())


@pytest.fixture(scope="module")
def violated_journal_dir(tmp_path_factory) -> Path:
    """The clean history, then a-1 commits b-1's partition in generation 2 and moves orders/0 back."""
    journal = clean_journal()
    journal.commit(T0 + 95_000, "a-1", 2, "orders/1", 6)
    journal.commit(T0 + 130_000, "a-1", 3, "orders/0", 15)
    return write_journal(tmp_path_factory.mktemp("journal") / "node-1", journal)


# -- running -------------------------------------------------------------------------------------


def run(args: list[str]):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None,
                                              "GROUPCTL_SPARK_MASTER": None}, catch_exceptions=False)


def run_json(args: list[str], status: int = 0) -> dict:
    result = run([*args, *MASTER, "--output", "json"])
    assert result.exit_code == status, (result.stdout, result.stderr)
    return json.loads(result.stdout)


# -- lag -----------------------------------------------------------------------------------------


def test_lag_json_has_a_status_per_group_and_partition_and_notfound_for_absent_groups(spark, dataset):
    report = run_json(["analyze", "lag", str(dataset), "--window", "3", "-g", "healthy", "-g", "slow",
                       "-g", "stuck", "-g", "re[wound]", "-g", "ghost"])
    assert list(report) == ["evaluated_at", "evaluated_at_iso", "window", "allowed_lag", "rules", "groups",
                            "partitions", "skipped"]
    assert (report["evaluated_at"], report["evaluated_at_iso"]) == (LAST_ROUND, "2025-11-21T06:10:00.000Z")
    assert (report["window"], report["allowed_lag"], report["rules"]) == (3, 0, "groupctl")
    assert [(g["group"], g["status"]) for g in report["groups"]] == [
        ("re[wound]", "ERR"), ("stuck", "ERR"), ("slow", "WARN"), ("ghost", "NOTFOUND"), ("healthy", "OK")]
    assert all(list(g) == GROUP_KEYS for g in report["groups"])
    statuses = {(p["group"], p["partition"]): p["status"] for p in report["partitions"]}
    assert statuses == {("healthy", 0): "OK", ("healthy", 1): "OK", ("slow", 0): "WARN", ("slow", 1): "OK",
                        ("stuck", 0): "STALL", ("re[wound]", 0): "REWIND"}
    stuck = next(p for p in report["partitions"] if p["group"] == "stuck")
    assert list(stuck) == [key for name in PARTITION_KEYS for key in ([name, f"{name}_iso"] if name.endswith("_ts")
                                                                     else [name])]
    assert (stuck["committed"], stuck["log_end"], stuck["current_lag"]) == (10, 710, 700)
    assert stuck["last_sample_ts_iso"] == "2025-11-21T06:10:00.000Z"
    assert report["skipped"] == {"malformed": 0, "unsupported_version": 0}


def test_lag_table_shows_groups_and_the_partitions_that_are_not_ok(spark, dataset):
    result = run(["analyze", "lag", str(dataset), "--window", "3", *MASTER])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Lag at 2025-11-21T06:10:00Z (window 3, allowed lag 0, groupctl rules)"
    assert lines[1].split() == ["GROUP", "STATUS", "PARTITIONS", "COMPLETE", "TOTAL-LAG", "MAX-LAG", "MAX-LAG-AT",
                                "MAX-LAG-TIME", "TREND", "CATCH-UP"]
    assert [line.split()[:2] for line in lines[2:6]] == [
        ["re[wound]", "ERR"], ["stuck", "ERR"], ["slow", "WARN"], ["healthy", "OK"]]
    partitions = lines[lines.index("", 6) + 1:]
    assert partitions[0].split()[:4] == ["GROUP", "TOPIC", "PARTITION", "STATUS"]
    assert [line.split()[:4] for line in partitions[1:4]] == [
        ["re[wound]", "orders", "0", "REWIND"], ["stuck", "orders", "0", "STALL"], ["slow", "orders", "0", "WARN"]]
    assert partitions[4] == "3 OK partition(s) not shown (--all-partitions lists them)."
    stuck = partitions[2].split()
    assert stuck[4:7] == ["10", "710", "700"] and stuck[-1] == "stuck-client"


def test_lag_all_partitions_lists_ok_partitions_too(spark, dataset):
    result = run(["analyze", "lag", str(dataset), "--window", "3", "--all-partitions", "-g", "healthy", *MASTER])
    assert result.exit_code == 0, result.stderr
    rows = [line.split()[:4] for line in result.stdout.splitlines() if line.startswith("healthy  ")]
    assert rows[1:] == [["healthy", "orders", "0", "OK"], ["healthy", "orders", "1", "OK"]]
    assert "not shown" not in result.stdout


def test_lag_fail_on_exits_3_after_printing_when_a_group_is_at_or_above_the_threshold(spark, dataset):
    result = run(["analyze", "lag", str(dataset), "--window", "3", "--fail-on", "err", *MASTER])
    assert result.exit_code == 3, result.stderr
    assert result.stdout.splitlines()[0].startswith("Lag at ")  # the results first, in full
    assert result.stderr.splitlines() == [
        "groupctl: lag check failed: 2 group(s) at ERR or worse: re[wound] ERR, stuck ERR"]
    report = run_json(["analyze", "lag", str(dataset), "--window", "3", "--fail-on", "WARN", "-g", "slow"],
                      status=3)
    assert [(g["group"], g["status"]) for g in report["groups"]] == [("slow", "WARN")]


def test_lag_fail_on_passes_below_the_threshold_and_fails_on_a_group_not_in_the_data(spark, dataset):
    assert run(["analyze", "lag", str(dataset), "--window", "3", "--fail-on", "err", "-g", "slow", "-g",
                "healthy", *MASTER]).exit_code == 0
    missing = run(["analyze", "lag", str(dataset), "--window", "3", "--fail-on", "err", "-g", "ghost", *MASTER])
    assert missing.exit_code == 3 and "ghost NOTFOUND" in missing.stderr


def test_lag_at_evaluates_the_samples_up_to_that_time(spark, dataset):
    # at round 3 `stuck` has a window of three identical offsets, none caught up; the rewind is yet to come
    report = run_json(["analyze", "lag", str(dataset), "--window", "3", "--at", "2025-11-21T05:30:00Z"])
    assert report["evaluated_at"] == T0 + 3 * ROUND_MS
    assert {g["group"]: g["status"] for g in report["groups"]} == {
        "stuck": "ERR", "slow": "WARN", "re[wound]": "OK", "healthy": "OK"}
    assert {p["last_sample_ts"] for p in report["partitions"]} == {T0 + 3 * ROUND_MS}


def test_lag_since_and_until_read_only_samples_in_range(spark, dataset):
    report = run_json(["analyze", "lag", str(dataset), "--window", "3", "-g", "stuck",
                       "--since", str(T0 + 5 * ROUND_MS), "--until", "2025-11-21T06:00:00+00:00"])
    [stuck] = report["partitions"]
    assert (stuck["window_start_ts"], stuck["window_end_ts"]) == (T0 + 5 * ROUND_MS, T0 + 6 * ROUND_MS)
    assert stuck["complete"] == pytest.approx(2 / 3)


def test_lag_since_after_every_sample_is_a_one_line_error(spark, dataset):
    result = run(["analyze", "lag", str(dataset), "--since", "2030-01-01T00:00:00Z", *MASTER])
    assert_one_line_error(result, 1, "no lag samples in", "at or after 2030-01-01T00:00:00.000Z")


def test_lag_skips_malformed_lines_and_unknown_versions_and_says_so(spark, tmp_path):
    rows = [sample(T0 + i * HOUR_MS, "g", 0, i, i) for i in range(3)]  # in hour=05, hour=06, hour=07
    future = json.dumps({**sample(T0, "g", 1, 0, 0), "v": 2})
    dataset = write_lag_dataset(tmp_path, rows, extra_lines=("{not json", '{"v":1,"ts":"soon"}', future))
    result = run(["analyze", "lag", str(dataset), *MASTER, "--output", "json"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[-1] == ("groupctl: warning: skipped 2 malformed line(s) and 1 row(s) of an "
                                              "unsupported schema version in the lag samples")
    report = json.loads(result.stdout)
    assert report["skipped"] == {"malformed": 2, "unsupported_version": 1}
    assert [(p["group"], p["partition"]) for p in report["partitions"]] == [("g", 0)]
    # --since prunes whole hour directories (keeping the hour before, where a round that crossed
    # the hour filed its later rows): the bad lines of hour=05 are not even read
    later = run_json(["analyze", "lag", str(dataset), "--since", "2025-11-21T07:00:00Z"])
    assert later["skipped"] == {"malformed": 0, "unsupported_version": 0}
    assert [p["window_start_ts"] for p in later["partitions"]] == [T0 + 2 * HOUR_MS]


def test_lag_since_keeps_rows_a_round_filed_in_the_hour_before(spark, tmp_path):
    just_after_the_hour = T0 + HOUR_MS + 1_000
    rows = [sample(T0 + HOUR_MS - 1_000, "early", 0, 1, 2), sample(just_after_the_hour, "late", 0, 1, 2)]
    directory = tmp_path / "date=2025-11-21" / "hour=05"  # one round, filed under its first sample's hour
    directory.mkdir(parents=True)
    (directory / f"part-{T0 + HOUR_MS - 1_000}-1-0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = run_json(["analyze", "lag", str(tmp_path), "--since", "2025-11-21T06:00:00Z"])
    assert [p["group"] for p in report["partitions"]] == ["late"]


def test_lag_out_writes_partitions_and_groups_as_parquet(spark, dataset, tmp_path):
    out = tmp_path / "results"
    report = run_json(["analyze", "lag", str(dataset), "--window", "3", "-g", "stuck", "-g", "ghost",
                       "--out", str(out)])
    partitions = spark.read.parquet(str(out / "partitions"))
    groups = spark.read.parquet(str(out / "groups"))
    assert partitions.columns == PARTITION_KEYS and groups.columns == GROUP_KEYS
    assert [(r["group"], r["status"], r["current_lag"]) for r in partitions.collect()] == [("stuck", "STALL", 700)]
    assert sorted((r["group"], r["status"]) for r in groups.collect()) == [("ghost", "NOTFOUND"), ("stuck", "ERR")]
    assert len(report["groups"]) == 2
    run_json(["analyze", "lag", str(dataset), "--window", "3", "-g", "slow", "--out", str(out)])
    assert [r["group"] for r in spark.read.parquet(str(out / "groups")).collect()] == ["slow"]  # replaced


def test_lag_rules_burrow_evaluates_with_burrows_rules_and_says_so(spark, tmp_path):
    # one lagging commit: Burrow judges it at once (an offset that never moved: STALL); the
    # groupctl rules wait for a full window
    dataset = write_lag_dataset(tmp_path, [sample(T0, "new", 0, 10, 20)])
    burrow = run_json(["analyze", "lag", str(dataset), "--rules", "burrow"])
    assert (burrow["rules"], [p["status"] for p in burrow["partitions"]]) == ("burrow", ["STALL"])
    assert [p["status"] for p in run_json(["analyze", "lag", str(dataset)])["partitions"]] == ["OK"]
    result = run(["analyze", "lag", str(dataset), "--rules", "BURROW", *MASTER])
    assert result.stdout.splitlines()[0].endswith("(window 10, allowed lag 0, burrow rules)")


def test_a_recording_split_into_two_folders_gives_the_answers_of_the_whole(spark, tmp_path):
    rows = lag_rows()
    whole = write_lag_dataset(tmp_path / "whole", rows)
    first = write_lag_dataset(tmp_path / "first", [row for row in rows if row["ts"] < T0 + 4 * ROUND_MS])
    second = write_lag_dataset(tmp_path / "second", [row for row in rows if row["ts"] >= T0 + 4 * ROUND_MS])
    expected = run_json(["analyze", "lag", str(whole), "--window", "3"])
    assert run_json(["analyze", "lag", str(first), str(second), "--window", "3"]) == expected
    # a recording given twice, or overlapping inputs, counts each sample once
    assert run_json(["analyze", "lag", str(whole), str(first), "--window", "3"]) == expected


def test_lag_plot_writes_a_png(spark, dataset, tmp_path):
    picture = tmp_path / "lag.png"
    run_json(["analyze", "lag", str(dataset), "--window", "3", "--plot", str(picture)])
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("args, fragments", [
    (["--window", "0"], ("--window", "0 is not in the range x>=1")),
    (["--window", "ten"], ("--window", "'ten' is not a valid integer")),
    (["--allowed-lag", "-1"], ("--allowed-lag", "-1 is not in the range x>=0")),
    (["--at", "yesterday"], ("--at 'yesterday': expected ISO-8601",)),
    (["--at", "2025-13-01T00:00:00Z"], ("--at '2025-13-01T00:00:00Z'",)),
    (["--since", "2025-11-21T06:00:00Z", "--until", "2025-11-21T05:00:00Z"], ("--since is after --until",)),
    (["--plot", "/nonexistent-dir/lag.png"], ("--plot", "does not exist")),
    (["--conf", "spark.sql.shuffle.partitions"], ("--conf 'spark.sql.shuffle.partitions': expected KEY=VALUE",)),
    (["--fail-on", "stop"], ("--fail-on", "'stop' is not one of")),
])
def test_lag_rejects_bad_options_before_starting_spark(args, fragments, tmp_path):
    assert_one_line_error(run(["analyze", "lag", str(tmp_path), *args]), 2, *fragments)


def test_a_missing_path_is_a_one_line_error(spark, tmp_path):
    missing = tmp_path / "nowhere"
    for command in (["lag"], ["rebalances"], ["audit"]):
        line = assert_one_line_error(run(["analyze", *command, str(missing), *MASTER]), 1, "cannot read",
                                     str(missing), "does not exist")
        assert "SQLSTATE" not in line and "[PATH_NOT_FOUND]" not in line


def test_an_empty_directory_is_a_one_line_error(spark, tmp_path):
    (tmp_path / ".part-1.jsonl.tmp").write_text('{"v":1}\n')  # a recorder's unfinished file is ignored
    assert_one_line_error(run(["analyze", "lag", str(tmp_path), *MASTER]), 1, f"no lag samples in {tmp_path}")
    assert_one_line_error(run(["analyze", "audit", str(tmp_path), *MASTER]), 1, f"no journal events in {tmp_path}")


def test_the_wrong_kind_of_input_is_a_one_line_error_not_an_empty_answer(spark, dataset, journal_dir):
    assert_one_line_error(run(["analyze", "audit", str(dataset), *MASTER]), 1,
                          f"no journal events in {dataset}", "malformed line(s)")
    assert_one_line_error(run(["analyze", "rebalances", str(dataset), *MASTER]), 1, "no journal events")
    assert_one_line_error(run(["analyze", "lag", str(journal_dir), *MASTER]), 1,
                          f"no lag samples in {journal_dir}", "malformed line(s)")


def test_only_malformed_input_is_a_one_line_error_with_the_counts(spark, tmp_path):
    (tmp_path / "events-00000001.jsonl").write_text('garbage\n{"v":7,"ts":1,"event":"x","group":"g"}\n')
    assert_one_line_error(run(["analyze", "rebalances", str(tmp_path), *MASTER]), 1,
                          "no journal events in", "1 malformed line(s), 1 row(s) of a schema version other than 1")


def test_an_unwritable_out_or_plot_is_a_one_line_error(spark, journal_dir, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    out = run(["analyze", "rebalances", str(journal_dir), *MASTER, "--out", str(a_file / "results")])
    assert_one_line_error(out, 1, f"cannot write {a_file / 'results' / 'summary'}: ", "Parent path is not a directory")
    plot = run(["analyze", "rebalances", str(journal_dir), *MASTER, "--plot", str(tmp_path)])  # a directory
    assert_one_line_error(plot, 1, f"cannot write {tmp_path}: Is a directory")


@pytest.mark.parametrize("command", ["lag", "rebalances", "audit"])
def test_without_pyspark_every_command_says_how_to_install_it(command, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` raises ImportError
    assert_one_line_error(run(["analyze", command, str(tmp_path)]), 1, "PySpark is not installed",
                          "pip install 'groupctl[spark]'")


# -- rebalances ----------------------------------------------------------------------------------


def test_rebalances_json_has_the_group_summary_and_the_timeline(spark, journal_dir):
    report = run_json(["analyze", "rebalances", str(journal_dir), "-g", "orders", "-g", "ghost"])
    assert list(report) == ["groups", "timeline", "not_found", "skipped"]
    [orders] = report["groups"]
    assert (orders["group"], orders["rebalances"], orders["max_ms"], orders["total_ms"]) == ("orders", 3, 2000, 4400)
    assert orders["reasons"] == {"join": 2, "leave": 1}
    assert (orders["joins"], orders["leaves"], orders["churn"], orders["unfinished"]) == (2, 1, 3, 0)
    assert [(row["generation"], row["reason"], row["duration_ms"]) for row in report["timeline"]] == [
        (1, "join", 1500), (2, "join", 2000), (3, "leave", 900)]
    assert report["timeline"][0]["completed_ts_iso"] == "2025-11-21T05:00:01.510Z"
    assert report["not_found"] == ["ghost"]


def test_rebalances_table_shows_the_summary_and_the_latest_rebalances(spark, journal_dir):
    result = run(["analyze", "rebalances", str(journal_dir), "--last", "2", *MASTER])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Rebalances per group (1 group(s))"
    summary = lines[2].split()
    assert summary[:5] == ["orders", "classic", "3", "1.5", "s"] and summary[7:11] == ["2.0", "s", "4.4", "s"]
    assert "join 2, leave 1" in lines[2]
    assert lines[4] == "Timeline: the last 2 of 3 rebalance(s)"
    assert [line.split()[1:6] for line in lines[6:8]] == [["orders", "classic", "2", "2.0", "s"],
                                                          ["orders", "classic", "3", "900", "ms"]]


def test_rebalances_plot_writes_a_png(spark, journal_dir, tmp_path):
    picture = tmp_path / "rebalances.png"
    run_json(["analyze", "rebalances", str(journal_dir), "--plot", str(picture)])
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000


def test_a_journal_split_into_two_folders_gives_the_answers_of_the_whole(spark, tmp_path):
    events = clean_journal().events
    whole = write_journal(tmp_path / "whole", clean_journal())
    for name, part in (("first", events[:6]), ("second", events[6:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "events-00000001.jsonl").write_text(
            "".join(json.dumps(event, separators=(",", ":")) + "\n" for event in part))
    for command in ("rebalances", "audit"):
        expected = run_json(["analyze", command, str(whole)])
        assert run_json(["analyze", command, str(tmp_path / "first"), str(tmp_path / "second")]) == expected


# -- audit ---------------------------------------------------------------------------------------


def test_audit_of_a_clean_journal_exits_0(spark, journal_dir, tmp_path):
    report = run_json(["analyze", "audit", str(journal_dir), "--out", str(tmp_path / "audit")])
    assert report["violations"] == []
    assert {row["invariant"]: row["violations"] for row in report["summary"]} == {
        "monotonic_offsets": 0, "owner_commits": 0, "single_owner": 0, "txn_offsets": 0}
    assert spark.read.parquet(str(tmp_path / "audit" / "summary")).count() == 4
    assert spark.read.parquet(str(tmp_path / "audit" / "violations")).count() == 0


def test_audit_exits_1_and_shows_each_violation_with_its_events(spark, violated_journal_dir):
    result = run(["analyze", "audit", str(violated_journal_dir), *MASTER, "--output", "json"])
    assert result.exit_code == 1, result.stderr
    violations = json.loads(result.stdout)["violations"]
    assert [(v["invariant"], v["group"], v["generation"], v["topic"], v["partition"]) for v in violations] == [
        ("owner_commits", "orders", 2, "orders", 1), ("monotonic_offsets", "orders", 3, "orders", 0)]
    assert [(r["event"], r["generation"], r.get("offset")) for r in violations[0]["records"]] == [
        ("rebalance_completed", 2, None), ("offset_commit", 2, 6)]
    assert [r["offset"] for r in violations[1]["records"]] == [20, 15]
    table = run(["analyze", "audit", str(violated_journal_dir), *MASTER])
    assert table.exit_code == 1
    assert "✗ owner_commits  group orders  generation 2  partition orders/1" in table.stdout
    assert '"event":"offset_commit"' in table.stdout
    assert table.stdout.splitlines()[-1] == "2 violation(s) found."


# -- session, progress, startup ------------------------------------------------------------------


def test_commands_reuse_a_running_session_and_leave_it_running(spark, journal_dir):
    run_json(["analyze", "rebalances", str(journal_dir)])
    assert spark.sparkContext._jsc is not None
    assert spark.range(3).count() == 3


class SessionStopRecorder:
    """The real session, except that `stop()` is only recorded."""

    def __init__(self, session):
        self._session = session
        self.stopped = False

    def __getattr__(self, name):
        return getattr(self._session, name)

    def stop(self):
        self.stopped = True


def test_a_command_stops_the_session_it_started(spark, journal_dir, monkeypatch):
    from pyspark.sql import SparkSession

    from groupctl.analytics import session as session_module

    started = SessionStopRecorder(spark)
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))  # "none running"
    monkeypatch.setattr(session_module, "spark_session", lambda master, conf: started)
    run_json(["analyze", "audit", str(journal_dir)])
    assert started.stopped


def test_conf_settings_reach_the_session_the_command_starts(spark, journal_dir, monkeypatch):
    from pyspark.sql import SparkSession

    from groupctl.analytics import session as session_module

    asked = {}

    def fake_session(master, conf):
        asked.update(master=master, conf=conf)
        return SessionStopRecorder(spark)

    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    monkeypatch.setattr(session_module, "spark_session", fake_session)
    run_json(["analyze", "audit", str(journal_dir),
              "--conf", "spark.hadoop.fs.s3a.endpoint=http://127.0.0.1:9000", "--conf", "spark.x=a=b"])
    assert asked == {"master": MASTER[1],
                     "conf": {"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000", "spark.x": "a=b"}}


def test_progress_shows_the_current_step_on_a_terminal(spark):
    from groupctl.analytics.progress import spark_progress

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    with spark_progress(spark, console) as step:
        step("evaluating")
        spark.range(0, 2_000_000, numPartitions=4).selectExpr("sum(id * id)").collect()
    assert "evaluating" in screen.getvalue()


def test_progress_prints_nothing_when_stderr_is_not_a_terminal(spark):
    from groupctl.analytics.progress import spark_progress

    screen = io.StringIO()
    with spark_progress(spark, Console(file=screen, force_terminal=False)) as step:
        step("evaluating")
        spark.range(10).count()
    assert screen.getvalue() == ""


def test_help_imports_neither_pyspark_nor_matplotlib():
    script = (
        "import sys\n"
        "from groupctl.cli.app import app\n"
        "for args in (['--help'], ['analyze', 'lag', '--help']):\n"
        "    try:\n"
        "        app(args, prog_name='groupctl')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'py4j', 'matplotlib'}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "groupctl analyze lag" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
