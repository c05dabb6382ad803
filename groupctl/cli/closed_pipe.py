"""A reader that goes away (`groupctl ... | head -1`): groupctl stops quietly with status 0, as
Unix tools do.

Invariants:
- A write that finds its pipe closed while the command runs ends it (`reader_gone`): status 0,
  nothing on stderr. (Rich's own handler exits with status 1; `signal(SIGPIPE, SIG_DFL)` would
  die with 141; Python's default prints "Exception ignored ... BrokenPipeError" at exit.)
- The closed stream's descriptor is pointed at /dev/null first (`detach`), so the interpreter's
  last flush of what is still buffered cannot fail loudly (the recipe of the Python docs, "Note
  on SIGPIPE").
- Every output goes through one of three doors, each ending here: the consoles of `CliEnv` and
  of typer's help (`end_quietly`), the raw writes of piped tables and JSON lines (`writing`),
  and, for anything else (`context.guard` turns a BrokenPipeError into status 0 too), the
  console script's entry, `main.main`, which flushes stdout last (`flush`): what could not be
  delivered then is dropped and the status stays the command's.
- `members simulate --output json` alone goes on after its reader went away (`detach`): the
  rehearsal stops as on Ctrl-C, so that its members leave the group first.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, Iterator, NoReturn

if TYPE_CHECKING:
    from rich.console import Console


def detach(stream: IO[Any]) -> None:
    """Point `stream`'s descriptor at /dev/null: what is written or flushed to it later goes
    nowhere instead of failing. (A stream without a descriptor, as tests capture output, is left
    alone.)"""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def reader_gone(stream: IO[Any]) -> NoReturn:
    """End groupctl now with status 0: `stream`'s reader went away."""
    detach(stream)
    raise SystemExit(0)


def end_quietly(console: "Console") -> "Console":
    """`console`, ending groupctl with `reader_gone` when its reader goes away (rich calls
    `on_broken_pipe`, its documented hook, and by default exits with status 1)."""
    console.on_broken_pipe = lambda: reader_gone(console.file)  # type: ignore[method-assign]
    return console


@contextmanager
def writing(stream: IO[Any]) -> Iterator[None]:
    """Around a write past the consoles (`stream.write`, `stream.flush`): a closed pipe ends
    groupctl quietly."""
    try:
        yield
    except BrokenPipeError:
        reader_gone(stream)


def flush(stream: IO[Any]) -> None:
    """Flush `stream` as the program ends; if its reader went away, drop what is left (the exit
    status stays the command's)."""
    try:
        stream.flush()
    except BrokenPipeError:
        detach(stream)
