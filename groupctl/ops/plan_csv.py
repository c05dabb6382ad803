"""Offset plans as CSV, in kafka-consumer-groups.sh's two forms, read and written.

- 3 columns `topic,partition,offset`: one group's offsets (the group is named elsewhere: the
  command line). What `offsets export GROUP` and `offsets reset GROUP --export` write.
- 4 columns `group,topic,partition,offset`: several groups' offsets (KIP-379). What
  `offsets export` and `offsets reset --export` write for `--group`/`--all-groups`.

Invariants:
- A file has one form: the first content line decides (3 or 4 fields, or the header of either
  form); a line of the other form is `BadInput` naming `source:line` and the expected form.
- Lenient where people edit files, strict about numbers: blank lines, `#` comment lines, spaces
  around fields and one optional header line are accepted; partitions are int32 and offsets
  int64, non-negative ASCII digits; each (group,) topic, partition appears once.
- Written as read: `format_csv` quotes a group id only where CSV needs it (a comma or a quote,
  spaces at either end, a leading `#`), and `parse_csv` keeps a quoted field as it is, so every
  group id without a line break survives export then import. No header is written
  (kafka-consumer-groups.sh writes none and reads the lines back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from groupctl.errors import BadInput
from groupctl.ops.reset import MAX_OFFSET, MAX_PARTITION, PlanOffsets, TopicPartition, check_topic_name

FORMS = {3: "topic,partition,offset", 4: "group,topic,partition,offset"}
_ASCII_DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class CsvPlan:
    """A parsed plan file: its form (`columns`) and the offsets it gives each group (a 3-column
    plan gives the same offsets to whichever group it is applied to)."""

    source: str
    columns: int
    by_group: Mapping[Optional[str], PlanOffsets]  # 3 columns: {None: offsets}; 4: {group: offsets}, file order

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups a 4-column plan names, in the order they first appear (3 columns: none)."""
        return tuple(g for g in self.by_group if g is not None)

    def offsets_for(self, group: str) -> PlanOffsets:
        """The offsets for `group`: all of a 3-column plan; a 4-column plan's rows of `group`
        (BadInput when it has none)."""
        if self.columns == 3:
            return self.by_group[None]
        if group not in self.by_group:
            raise BadInput(f"{self.source}: no offsets for group '{group}' (the file has {_names(self.groups)})")
        return self.by_group[group]


def _names(groups: Iterable[str]) -> str:
    quoted = [f"'{g}'" for g in groups]
    return ", ".join(quoted[:5]) + (f" and {len(quoted) - 5} more" if len(quoted) > 5 else "")


def split_fields(line: str, where: str) -> list[str]:
    """One CSV line -> its fields: unquoted fields stripped of spaces, a quoted field ("...",
    with "" for a quote) kept exactly; BadInput (naming `where`) for a broken quote."""
    fields: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == '"':
            value, i = [], i + 1
            while True:
                if i >= n:
                    raise BadInput(f"{where}: a quoted field is not closed")
                if line[i] == '"' and i + 1 < n and line[i + 1] == '"':
                    value.append('"')
                    i += 2
                elif line[i] == '"':
                    i += 1
                    break
                else:
                    value.append(line[i])
                    i += 1
            while i < n and line[i] in " \t":
                i += 1
            if i < n and line[i] != ",":
                raise BadInput(f"{where}: unexpected text after a quoted field")
            fields.append("".join(value))
        else:
            end = line.find(",", i)
            end = n if end < 0 else end
            fields.append(line[i:end].strip())
            i = end
        if i >= n:
            return fields
        i += 1  # the comma


def _number(value: str, what: str, maximum: int, where: str) -> int:
    if not value or not set(value) <= _ASCII_DIGITS:  # str.isdigit() would take "²", which int() rejects
        raise BadInput(f"{where}: {what} '{value}' is not a non-negative integer")
    if int(value) > maximum:
        raise BadInput(f"{where}: {what} {value} is too large (at most {maximum})")
    return int(value)


def parse_csv(text: str, source: str = "<plan>") -> CsvPlan:
    """A CSV plan in either form -> CsvPlan; BadInput naming `source:line` for any bad line,
    `source` alone for a plan without offsets."""
    columns: Optional[int] = None
    form_line = 0
    by_group: dict[Optional[str], PlanOffsets] = {}
    first_line: dict[tuple[Optional[str], TopicPartition], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{source}:{number}"
        fields = split_fields(stripped, where)
        if columns is None:
            if len(fields) not in FORMS:
                raise BadInput(f"{where}: expected {FORMS[3]} or {FORMS[4]}, got '{stripped}'")
            columns, form_line = len(fields), number
            if [f.lower() for f in fields] == FORMS[columns].split(","):
                continue  # the header
        if len(fields) != columns:
            mixed = f" (line {form_line} has {columns} fields: one form per file)" if len(fields) in FORMS else ""
            raise BadInput(f"{where}: expected {FORMS[columns]}, got '{stripped}'{mixed}")
        group = fields[0] if columns == 4 else None
        if group == "":
            raise BadInput(f"{where}: the group id is empty")
        topic, partition_text, offset_text = fields[-3:]
        try:
            check_topic_name(topic)
        except BadInput:
            raise BadInput(f"{where}: invalid topic name '{topic}'") from None
        tp = (topic, _number(partition_text, "partition", MAX_PARTITION, where))
        offset = _number(offset_text, "offset", MAX_OFFSET, where)
        key = (group, tp)
        if key in first_line:
            of = f" of group '{group}'" if group is not None else ""
            raise BadInput(f"{where}: {tp[0]}:{tp[1]}{of} appears twice (first on line {first_line[key]})")
        first_line[key] = number
        by_group.setdefault(group, PlanOffsets(source=source))[tp] = offset
    if not by_group:
        raise BadInput(f"{source}: no offsets (expected lines of {FORMS[3]} or {FORMS[4]})")
    return CsvPlan(source, columns or 3, by_group)


def _group_field(group: str) -> str:
    if len(f"x{group}x".splitlines()) > 1:  # what `parse_csv` would read as two lines
        raise BadInput(f"group id {group!r} holds a line break: it cannot be written as a CSV line")
    if any(c in group for c in ',"') or group != group.strip() or group.startswith("#"):
        return '"' + group.replace('"', '""') + '"'
    return group


def format_csv(rows: Iterable[tuple[str, int, int]], group: Optional[str] = None) -> str:
    """`topic,partition,offset` lines, or `group,topic,partition,offset` lines when `group` is given."""
    prefix = "" if group is None else _group_field(group) + ","
    return "".join(f"{prefix}{topic},{partition},{offset}\n" for topic, partition, offset in rows)
