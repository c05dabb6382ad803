"""The lag dataset writer (`groupctl.ops.lag_dataset`): one atomic file per round, under UTC
date=/hour= partition directories, and nothing partial left by a failure."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from groupctl.ops import lag_dataset
from groupctl.errors import BadInput
from groupctl.ops.lag_dataset import LagDatasetWriter, partition_dir, prepare_dataset_dir
from groupctl.ops.lag_record import LagRow

CONTRACT_KEYS = ["v", "ts", "cluster", "group", "topic", "partition", "committed", "log_end", "state", "members",
                 "owner"]


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp() * 1000)


def row(ts: int, partition: int = 0, **changes) -> LagRow:
    fields = dict(ts=ts, cluster="prod", group="orders", topic="payments", partition=partition, committed=10,
                  log_end=15, state="Stable", members=2, owner="app-1")
    return LagRow(**{**fields, **changes})


def files_under(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_round_becomes_one_jsonl_file_under_the_utc_date_and_hour_of_its_first_sample(tmp_path):
    first, later = ms("2024-03-05T23:59:59.900"), ms("2024-03-06T00:00:00.100")
    rows = [row(later, 1), row(first, 0, committed=None, log_end=None, state=None, members=None, owner=None)]
    written = LagDatasetWriter(tmp_path, pid=4242).write_round(rows)
    assert files_under(tmp_path) == [f"date=2024-03-05/hour=23/part-{first}-4242-1.jsonl"]
    assert written.path == tmp_path / files_under(tmp_path)[0]
    assert (written.rows, written.first_ts) == (2, first)
    text = written.path.read_text()
    assert text.endswith("\n") and " " not in text  # compact separators, one object per line
    decoded = [json.loads(line) for line in text.splitlines()]
    assert [list(d) for d in decoded] == [CONTRACT_KEYS, CONTRACT_KEYS]
    assert decoded[0] == {"v": 1, "ts": later, "cluster": "prod", "group": "orders", "topic": "payments",
                          "partition": 1, "committed": 10, "log_end": 15, "state": "Stable", "members": 2,
                          "owner": "app-1"}
    assert decoded[1]["committed"] is None and decoded[1]["owner"] is None


def test_every_round_gets_a_new_file_numbered_by_the_writer(tmp_path):
    writer = LagDatasetWriter(tmp_path, pid=7)
    ts = ms("2024-01-01T05:10:00")
    for _ in range(3):
        writer.write_round([row(ts)])
    assert files_under(tmp_path) == [f"date=2024-01-01/hour=05/part-{ts}-7-{n}.jsonl" for n in (1, 2, 3)]


def test_partition_directories_use_the_utc_calendar_with_two_digit_hours():
    assert partition_dir(Path("/d"), ms("2024-12-31T07:59:59.999")) == Path("/d/date=2024-12-31/hour=07")
    assert partition_dir(Path("/d"), 0) == Path("/d/date=1970-01-01/hour=00")


def test_a_round_without_rows_writes_no_file(tmp_path):
    assert LagDatasetWriter(tmp_path).write_round([]) is None
    assert list(tmp_path.iterdir()) == []


def test_non_ascii_group_ids_are_written_as_escaped_ascii_json(tmp_path):
    written = LagDatasetWriter(tmp_path).write_round([row(1, group="zahlungen-ü-支付")])
    raw = written.path.read_bytes()
    assert raw.isascii()
    assert json.loads(raw)["group"] == "zahlungen-ü-支付"


def test_the_file_appears_under_its_final_name_only_after_its_data_is_synced(tmp_path, monkeypatch):
    synced_before_rename = []
    real_fsync, real_rename = os.fsync, os.rename
    fsynced = []
    monkeypatch.setattr(lag_dataset.os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd)))

    def rename(source, target):
        assert re.fullmatch(r"\.part-.*\.jsonl\.tmp", os.path.basename(source))
        assert not os.path.exists(target)
        synced_before_rename.append(bool(fsynced))
        real_rename(source, target)

    monkeypatch.setattr(lag_dataset.os, "rename", rename)
    LagDatasetWriter(tmp_path).write_round([row(1)])
    assert synced_before_rename == [True]
    assert len(fsynced) >= 2  # the file, then the directory after the rename


def test_a_failure_while_writing_leaves_no_file_at_all_and_is_raised(tmp_path, monkeypatch):
    def failing_fsync(fd):
        raise OSError(5, "Input/output error")

    writer = LagDatasetWriter(tmp_path)
    monkeypatch.setattr(lag_dataset.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        writer.write_round([row(ms("2024-01-01T00:00:00"))])
    assert files_under(tmp_path) == []  # neither the final file nor the temp dot-file


def test_an_exception_mid_round_while_encoding_leaves_no_file(tmp_path):
    class Unencodable(LagRow):
        def to_json(self):
            raise RuntimeError("boom")

    rows = [row(1), Unencodable(**{**row(1).__dict__, "partition": 1})]
    with pytest.raises(RuntimeError, match="boom"):
        LagDatasetWriter(tmp_path).write_round(rows)
    assert files_under(tmp_path) == []


def test_a_rename_failure_removes_the_temp_file(tmp_path, monkeypatch):
    def failing_rename(source, target):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(lag_dataset.os, "rename", failing_rename)
    with pytest.raises(OSError):
        LagDatasetWriter(tmp_path).write_round([row(ms("2024-01-01T00:00:00"))])
    assert files_under(tmp_path) == []


def test_prepare_creates_missing_directories_and_refuses_a_file(tmp_path):
    nested = tmp_path / "a" / "b"
    assert prepare_dataset_dir(nested) == nested and nested.is_dir()
    afile = tmp_path / "plain"
    afile.write_text("x")
    with pytest.raises(BadInput, match="exists and is not a directory"):
        prepare_dataset_dir(afile)
