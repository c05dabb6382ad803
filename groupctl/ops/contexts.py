"""Contexts: named connection settings (`groupctl config ...` and the global `--context`), as
kubectl's and kafkactl's, so that an operator chooses a cluster once instead of typing
--bootstrap, --zk and their credentials on every command.

The file is `$XDG_CONFIG_HOME/groupctl/config.toml`, or `~/.config/groupctl/config.toml` when
XDG_CONFIG_HOME is unset, empty or relative (as the XDG base directory specification says):

    current-context = "prod"

    [contexts.prod]
    bootstrap = "kafka-1:9092,kafka-2:9092"
    zk = "zk-1:2181/groupctl"
    command-config = "/home/ops/prod.properties"
    zk-auth = "@/home/ops/prod-zk.auth"
    timeout-ms = 5000

Invariants:
- The file may hold a secret (`zk-auth`): it is written with mode 0600, as a temporary file
  created 0600 beside it and renamed over it (a reader sees the old file or the new one, never a
  part of one); a directory groupctl creates is 0700. A symlinked file is written through to its
  target.
- Reading understands everything or refuses: TOML syntax, an unknown key, a value of the wrong
  type, a current-context without its table are one BadInput naming the file (exit 2). A
  missing file is a file without contexts.
- Paths (`command-config`, the file of `zk-auth = "@PATH"`) are stored absolute, so a context
  means the same from any directory.
- Writing rewrites the whole file (`render_toml`, strings and integers only: the format is this
  flat); comments added by hand are not kept.
- Only storage and choice: which setting wins (command line, then environment, then the
  context) is the CLI's (`groupctl.cli.context.CliEnv`).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from groupctl.errors import BadInput, OpsError

FIELDS = ("bootstrap", "zk", "command-config", "zk-auth", "timeout-ms")
"""A context's keys in the file, in the order written (`Context` has them with '_' for '-')."""
HEADER = "# groupctl contexts, written by `groupctl config` (comments added here are not kept)."
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


@dataclass(frozen=True)
class Context:
    """One named context; a None field is not set (the option's default applies)."""

    name: str
    bootstrap: Optional[str] = None
    zk: Optional[str] = None
    command_config: Optional[str] = None  # an absolute path
    zk_auth: Optional[str] = field(default=None, repr=False)  # "digest:USER:PASSWORD" or "@/abs/path"
    timeout_ms: Optional[int] = None

    def fields(self) -> dict[str, Any]:
        """The fields that are set, by their key in the file, in `FIELDS` order."""
        values = {key: getattr(self, _attribute(key)) for key in FIELDS}
        return {key: value for key, value in values.items() if value is not None}

    def to_json(self, current: bool) -> dict[str, Any]:
        """`config get-contexts --output json`: zk-auth only as whether it is set (a secret)."""
        return {"name": self.name, "current": current, "bootstrap": self.bootstrap, "zk": self.zk,
                "command_config": self.command_config, "zk_auth_set": self.zk_auth is not None,
                "timeout_ms": self.timeout_ms}


@dataclass(frozen=True)
class Contexts:
    """The file's contents: its contexts in file order and the current one's name."""

    path: Path
    current: Optional[str] = None
    contexts: tuple[Context, ...] = ()

    @property
    def names(self) -> list[str]:
        return [context.name for context in self.contexts]

    def get(self, name: str) -> Context:
        """The context called `name`; BadInput naming the known ones when there is none."""
        for context in self.contexts:
            if context.name == name:
                return context
        known = ", ".join(repr(n) for n in self.names)
        raise BadInput(f"unknown context {name!r} " + (f"(known: {known})" if known else
                                                     f"(no context is defined in {self.path})"))

    def chosen(self, name: Optional[str]) -> Optional[Context]:
        """The context a command uses: `name` (--context / GROUPCTL_CONTEXT) when given, else
        the current one, else None."""
        if name is not None:
            return self.get(name)
        return None if self.current is None else self.get(self.current)


def config_path(environ: Mapping[str, str]) -> Path:
    """Where the contexts are kept, for this environment."""
    base = environ.get("XDG_CONFIG_HOME", "")
    directory = Path(base) if base and os.path.isabs(base) else Path(environ.get("HOME") or Path.home()) / ".config"
    return directory / "groupctl" / "config.toml"


def load_contexts(path: Path) -> Contexts:
    """The contexts in `path` (none when it does not exist); BadInput naming the file and the
    problem when it cannot be read or is not a contexts file."""
    try:
        document = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return Contexts(path)
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not valid TOML: {exc}") from None
    return _parse(path, document)


def _parse(path: Path, document: dict[str, Any]) -> Contexts:
    def bad(problem: str) -> BadInput:
        return BadInput(f"{path}: {problem}")

    unknown = sorted(set(document) - {"current-context", "contexts"})
    if unknown:
        raise bad(f"unknown key {unknown[0]!r} (expected current-context and [contexts.NAME] tables)")
    tables = document.get("contexts", {})
    if not isinstance(tables, dict):
        raise bad("'contexts' must be a table of [contexts.NAME] tables")
    contexts = []
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise bad(f"contexts.{name} must be a table")
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise bad(f"contexts.{name}: unknown key {unknown[0]!r} (expected {', '.join(FIELDS)})")
        for key, value in table.items():
            if key == "timeout-ms":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise bad(f"contexts.{name}: timeout-ms must be a positive integer (milliseconds)")
            elif not isinstance(value, str):
                raise bad(f"contexts.{name}: {key} must be a string")
        contexts.append(Context(name, **{_attribute(key): value for key, value in table.items()}))
    current = document.get("current-context")
    if current is not None and not isinstance(current, str):
        raise bad("current-context must be a string")
    if current is not None and current not in tables:
        raise bad(f"current-context {current!r} has no [contexts.{_toml_key(current)}] table")
    return Contexts(path, current, tuple(contexts))


def save_contexts(contexts: Contexts) -> None:
    """Write `contexts` to their file, atomically, mode 0600 (OpsError when it cannot be)."""
    target = Path(os.path.realpath(contexts.path))
    text = render_toml(contexts)
    try:
        if not target.parent.is_dir():
            os.makedirs(target.parent, mode=0o700)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp: created 0600
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise OpsError(f"cannot write {contexts.path}: {exc.strerror or exc}") from None


def set_context(contexts: Contexts, name: str, values: Mapping[str, Any], unset: Iterable[str] = (),
                *, cwd: Optional[Path] = None) -> Contexts:
    """`contexts` with context `name` created or changed: the `values` given (keys of FIELDS)
    replace its own, the `unset` keys are removed, the rest is kept. Values are checked and
    paths made absolute (relative to `cwd`, default the working directory); BadInput else."""
    _check_text(name, "a context name")
    if not name.strip() or not name.isprintable():
        raise BadInput(f"context name {name!r}: expected printable text")
    unset = list(dict.fromkeys(unset))
    for key in [*values, *unset]:
        if key not in FIELDS:
            raise BadInput(f"unknown context field {key!r} (expected one of {', '.join(FIELDS)})")
    both = [key for key in unset if key in values]
    if both:
        raise BadInput(f"{both[0]} is both given and unset")
    base = Path.cwd() if cwd is None else cwd
    checked = {key: _checked(key, value, base) for key, value in values.items()}
    existing = next((c for c in contexts.contexts if c.name == name), None)
    changed = replace(existing or Context(name), **{_attribute(k): v for k, v in checked.items()},
                      **{_attribute(k): None for k in unset})
    if existing is None:
        return replace(contexts, contexts=(*contexts.contexts, changed))
    return replace(contexts, contexts=tuple(changed if c.name == name else c for c in contexts.contexts))


def use_context(contexts: Contexts, name: str) -> Contexts:
    """`contexts` with `name` as the current context (BadInput when there is no such context)."""
    contexts.get(name)
    return replace(contexts, current=name)


def delete_context(contexts: Contexts, name: str) -> Contexts:
    """`contexts` without `name` (BadInput when there is none); deleting the current context
    leaves none current."""
    contexts.get(name)
    return replace(contexts, current=None if contexts.current == name else contexts.current,
                   contexts=tuple(c for c in contexts.contexts if c.name != name))


def _checked(key: str, value: Any, cwd: Path) -> Any:
    """A field's value as stored: checked, paths absolute."""
    if key == "timeout-ms":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadInput(f"timeout-ms must be a positive number of milliseconds, not {value!r}")
        return value
    _check_text(value, key)
    if not value.strip():
        raise BadInput(f"{key} must not be empty")
    if key == "bootstrap":
        from groupctl.client.kafka import parse_bootstrap  # kafka-python only for this check

        parse_bootstrap(value)
        return value.strip()
    if key == "command-config":
        path = _absolute(value, cwd)
        if not path.is_file():
            raise BadInput(f"command-config {value!r}: no such file")
        return str(path)
    if key == "zk-auth":
        return _zk_auth(value, cwd)
    return value.strip()


def _zk_auth(value: str, cwd: Path) -> str:
    """--zk-auth as stored: checked as the tools would read it, a file spelling made absolute."""
    from groupctl.store.zk_auth import BadZkAuth, parse_zk_auth

    for prefix in ("@", "file:"):
        if value.startswith(prefix):
            value = prefix + str(_absolute(value[len(prefix):], cwd))
            break
    try:
        parse_zk_auth(value)
    except BadZkAuth as exc:
        raise BadInput(str(exc)) from None
    return value


def _absolute(path: str, cwd: Path) -> Path:
    expanded = Path(path).expanduser()
    return Path(os.path.normpath(expanded if expanded.is_absolute() else cwd / expanded))


def _check_text(value: Any, what: str) -> None:
    """Text the file can hold (UTF-8: no lone surrogates, as undecodable arguments become)."""
    if not isinstance(value, str):
        raise BadInput(f"{what} must be text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{what} {value!r} is not valid UTF-8 text") from None


def _attribute(key: str) -> str:
    return key.replace("-", "_")


# -- the TOML writer (strings and integers: the whole of this format) ---------------------------


def render_toml(contexts: Contexts) -> str:
    """The file's text; `tomllib` reads it back as the same contexts."""
    lines = [HEADER]
    if contexts.current is not None:
        lines.append(f"current-context = {_toml_string(contexts.current)}")
    for context in contexts.contexts:
        lines += ["", f"[contexts.{_toml_key(context.name)}]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in context.fields().items()]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"a context holds strings and integers, not {value!r}")
    return str(value) if isinstance(value, int) else _toml_string(value)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
                         for c in text) + '"'
