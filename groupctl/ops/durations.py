"""Durations as operators type them, in one grammar for every option that takes one.

Accepted (all mean a non-negative length of time, returned in whole milliseconds):
- units, lower case, one or more in a row: `500ms`, `90s`, `30m`, `1h`, `2d`, `1h30m`, `1.5h`
  (`ms` milliseconds, `s` seconds, `m` minutes, `h` hours, `d` days of 24 hours);
- ISO-8601 as java.time.Duration writes it, which kafka-consumer-groups.sh's `--by-duration`
  takes: `PnDTnHnMn[.n]S`, any case (`PT30M`, `P1DT12H`, `pt10s`);
- a bare number only where the caller allows it (`bare_seconds`: lag record's `--interval 5`).

Invariants: the result is exact (decimal arithmetic, truncated to the millisecond); every
failure is `BadInput` with one line naming the option (when given) and the accepted forms.
Deliberate choice: unit letters are lower case only, so `30M` (months? minutes?) is an error
instead of a guess; ISO-8601 has no months (`P1M`) or years, as in java.time.Duration.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Optional

from groupctl.errors import BadInput

MS_PER_UNIT = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
EXAMPLES = "e.g. 30m, 1h, 2d, 1h30m, 500ms or ISO-8601 PnDTnHnMnS such as PT30M"

_NUMBER = r"\d+(?:\.\d+)?"
_UNITS = re.compile(rf"(?:{_NUMBER}(?:ms|s|m|h|d))+", re.ASCII)  # ASCII digits only, as plans take them
_UNIT_PART = re.compile(rf"({_NUMBER})(ms|s|m|h|d)", re.ASCII)
_BARE = re.compile(_NUMBER, re.ASCII)
_ISO = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d{1,9}))?S)?)?", re.IGNORECASE | re.ASCII)


def parse_duration_ms(text: str, option: Optional[str] = None, *, bare_seconds: bool = False) -> int:
    """`text` in one of the forms of the module docstring -> milliseconds; BadInput otherwise."""
    stripped = text.strip()
    if _UNITS.fullmatch(stripped):
        total = sum(Decimal(number) * MS_PER_UNIT[unit] for number, unit in _UNIT_PART.findall(stripped))
        return int(total)
    if bare_seconds and _BARE.fullmatch(stripped):
        return int(Decimal(stripped) * 1000)
    iso = _ISO.fullmatch(stripped)
    if iso and any(iso.groups()[:4]) and not stripped.upper().endswith("T"):
        days, hours, minutes, seconds, fraction = iso.groups()
        whole_s = int(days or 0) * 86_400 + int(hours or 0) * 3_600 + int(minutes or 0) * 60 + int(seconds or 0)
        return whole_s * 1000 + int((fraction or "0").ljust(3, "0")[:3])
    bare = "; a bare number is seconds" if bare_seconds else ""
    what = f"{option} '{text}' is not a duration" if option else f"cannot parse duration '{text}'"
    raise BadInput(f"{what}: expected {EXAMPLES}{bare}")
