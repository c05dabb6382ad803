"""The contexts file (`groupctl.ops.contexts`): where it lives, what it may hold, how it is
written (0600, atomically, read back as written) and how a context is chosen."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.errors import BadInput
from groupctl.ops.contexts import (
    Context,
    Contexts,
    config_path,
    delete_context,
    load_contexts,
    render_toml,
    save_contexts,
    set_context,
    use_context,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- where ------------------------------------------------------------------------------------


def test_the_file_is_under_xdg_config_home_else_under_home_dot_config():
    assert config_path({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}) == Path("/x/cfg/groupctl/config.toml")
    assert config_path({"HOME": "/home/u"}) == Path("/home/u/.config/groupctl/config.toml")
    assert config_path({"XDG_CONFIG_HOME": "", "HOME": "/home/u"}) == Path("/home/u/.config/groupctl/config.toml")


def test_a_relative_xdg_config_home_is_ignored_as_the_specification_says():
    assert config_path({"XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"}) == Path("/home/u/.config/groupctl/config.toml")


# -- writing ------------------------------------------------------------------------------------


def test_a_saved_file_is_mode_0600_in_a_new_directory_of_mode_0700(tmp_path):
    path = tmp_path / "cfg" / "groupctl" / "config.toml"
    save_contexts(set_context(Contexts(path), "prod", {"bootstrap": "kafka:9092", "zk-auth": "digest:u:p"}))
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # no temporary file left


def test_saving_over_a_readable_file_leaves_it_0600(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("")
    path.chmod(0o644)
    save_contexts(set_context(load_contexts(path), "a", {"zk": "zk:2181"}))
    assert mode(path) == 0o600


def test_saving_writes_through_a_symlink_to_its_target(tmp_path):
    target = tmp_path / "dotfiles" / "groupctl.toml"
    target.parent.mkdir()
    target.write_text("")
    link = tmp_path / "config.toml"
    link.symlink_to(target)
    save_contexts(set_context(load_contexts(link), "a", {"zk": "zk:2181"}))
    assert link.is_symlink()
    assert load_contexts(target).get("a").zk == "zk:2181"


def test_the_written_file_is_the_documented_format(tmp_path):
    path = tmp_path / "config.toml"
    contexts = set_context(Contexts(path), "prod", {"bootstrap": "k1:9092,k2:9092", "zk": "zk:2181/g",
                                                    "timeout-ms": 5000})
    text = render_toml(use_context(contexts, "prod"))
    assert 'current-context = "prod"\n\n[contexts.prod]\nbootstrap = "k1:9092,k2:9092"\nzk = "zk:2181/g"\n' \
           'timeout-ms = 5000\n' in text


def test_a_name_that_is_no_bare_key_is_quoted(tmp_path):
    contexts = set_context(Contexts(tmp_path / "c.toml"), 'eu "west".1', {"zk": "zk:2181"})
    assert '[contexts."eu \\"west\\".1"]' in render_toml(contexts)


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1)  # any text but lone surrogates


@given(names=st.lists(TEXT, min_size=1, max_size=4, unique=True), value=TEXT, timeout=st.integers(1, 2**40))
def test_any_names_and_values_read_back_as_written(names, value, timeout):
    contexts = Contexts(Path("/nowhere"), current=names[0], contexts=tuple(
        Context(name, zk=value, zk_auth=value, timeout_ms=timeout) for name in names))
    document = tomllib.loads(render_toml(contexts))
    assert document["current-context"] == names[0]
    assert document["contexts"] == {name: {"zk": value, "zk-auth": value, "timeout-ms": timeout} for name in names}


# -- reading ------------------------------------------------------------------------------------


def test_a_missing_file_holds_no_contexts(tmp_path):
    contexts = load_contexts(tmp_path / "none.toml")
    assert contexts.contexts == () and contexts.current is None
    assert contexts.chosen(None) is None


@pytest.mark.parametrize("text, fragment", [
    ("current-context = \n", "not valid TOML"),
    ("colour = 'red'\n", "unknown key 'colour'"),
    ("contexts = 3\n", "'contexts' must be a table"),
    ("[contexts]\nprod = 'x'\n", "contexts.prod must be a table"),
    ("[contexts.prod]\nbootstrap = 9092\n", "contexts.prod: bootstrap must be a string"),
    ("[contexts.prod]\nbroker = 'k:9092'\n", "contexts.prod: unknown key 'broker'"),
    ("[contexts.prod]\ntimeout-ms = 0\n", "timeout-ms must be a positive integer"),
    ("[contexts.prod]\ntimeout-ms = '5000'\n", "timeout-ms must be a positive integer"),
    ("[contexts.prod]\ntimeout-ms = true\n", "timeout-ms must be a positive integer"),
    ("current-context = 'dev'\n[contexts.prod]\n", "current-context 'dev' has no [contexts.dev] table"),
    ("current-context = 1\n", "current-context must be a string"),
])
def test_a_malformed_file_is_bad_input_naming_the_file_and_the_problem(tmp_path, text, fragment):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(BadInput) as raised:
        load_contexts(path)
    assert str(path) in str(raised.value) and fragment in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_file_that_is_not_utf8_is_bad_input(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'current-context = "\xff"\n')
    with pytest.raises(BadInput, match="not UTF-8"):
        load_contexts(path)


# -- choosing ---------------------------------------------------------------------------------


def contexts_of(tmp_path, current=None) -> Contexts:
    contexts = set_context(Contexts(tmp_path / "c.toml"), "prod", {"bootstrap": "prod:9092"})
    contexts = set_context(contexts, "dev", {"bootstrap": "dev:9092"})
    return use_context(contexts, current) if current else contexts


def test_a_named_context_wins_over_the_current_one(tmp_path):
    contexts = contexts_of(tmp_path, current="prod")
    assert contexts.chosen(None).bootstrap == "prod:9092"
    assert contexts.chosen("dev").bootstrap == "dev:9092"


def test_without_a_current_context_none_is_chosen(tmp_path):
    assert contexts_of(tmp_path).chosen(None) is None


def test_an_unknown_context_is_bad_input_naming_the_known_ones(tmp_path):
    with pytest.raises(BadInput, match=r"unknown context 'stage' \(known: 'prod', 'dev'\)"):
        contexts_of(tmp_path).chosen("stage")
    with pytest.raises(BadInput, match="no context is defined in"):
        Contexts(tmp_path / "c.toml").chosen("stage")
    with pytest.raises(BadInput, match="unknown context 'stage'"):
        use_context(contexts_of(tmp_path), "stage")
    with pytest.raises(BadInput, match="unknown context 'stage'"):
        delete_context(contexts_of(tmp_path), "stage")


# -- changing ---------------------------------------------------------------------------------


def test_set_context_changes_only_the_fields_given_and_unset_removes_one(tmp_path):
    contexts = set_context(Contexts(tmp_path / "c.toml"), "prod",
                           {"bootstrap": "k:9092", "zk": "zk:2181", "timeout-ms": 3000})
    contexts = set_context(contexts, "prod", {"bootstrap": "k2:9092"}, ["zk"])
    assert contexts.get("prod") == Context("prod", bootstrap="k2:9092", timeout_ms=3000)


def test_a_field_both_given_and_unset_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="zk is both given and unset"):
        set_context(Contexts(tmp_path / "c.toml"), "prod", {"zk": "zk:2181"}, ["zk"])


def test_paths_are_stored_absolute(tmp_path):
    (tmp_path / "client.properties").write_text("security.protocol=PLAINTEXT\n")
    (tmp_path / "zk.auth").write_text("digest:ops:secret\n")
    contexts = set_context(Contexts(tmp_path / "c.toml"), "prod",
                           {"command-config": "client.properties", "zk-auth": "@./zk.auth"}, cwd=tmp_path)
    assert contexts.get("prod").command_config == str(tmp_path / "client.properties")
    assert contexts.get("prod").zk_auth == f"@{tmp_path / 'zk.auth'}"


@pytest.mark.parametrize("values, fragment", [
    ({"bootstrap": "no-port"}, "is not HOST:PORT"),
    ({"zk": " "}, "zk must not be empty"),
    ({"command-config": "missing.properties"}, "no such file"),
    ({"zk-auth": "digest:only-user"}, "expected digest:USER:PASSWORD"),
    ({"timeout-ms": 0}, "timeout-ms must be a positive number"),
    ({"colour": "red"}, "unknown context field 'colour'"),
])
def test_a_bad_value_is_refused_before_anything_is_written(tmp_path, values, fragment):
    with pytest.raises(BadInput, match=fragment):
        set_context(Contexts(tmp_path / "c.toml"), "prod", values, cwd=tmp_path)
    assert not (tmp_path / "c.toml").exists()


def test_a_zk_auth_error_never_shows_the_password(tmp_path):
    with pytest.raises(BadInput) as raised:
        set_context(Contexts(tmp_path / "c.toml"), "prod", {"zk-auth": "digst:ops:hunter2"})
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize("name", ["", "  ", "tab\there", "bad\udcffname"])
def test_a_context_name_must_be_printable_text(tmp_path, name):
    with pytest.raises(BadInput):
        set_context(Contexts(tmp_path / "c.toml"), name, {})


def test_deleting_the_current_context_leaves_none_current(tmp_path):
    contexts = delete_context(contexts_of(tmp_path, current="prod"), "prod")
    assert contexts.current is None and contexts.names == ["dev"]
    assert delete_context(contexts_of(tmp_path, current="dev"), "prod").current == "dev"


def test_what_is_saved_loads_back_equal(tmp_path):
    path = tmp_path / "config.toml"
    contexts = use_context(contexts_of(tmp_path), "dev")
    contexts = Contexts(path, contexts.current, contexts.contexts)
    save_contexts(contexts)
    assert load_contexts(path) == contexts


def test_a_file_that_cannot_be_written_is_an_ops_error_naming_it(tmp_path):
    from groupctl.errors import OpsError

    blocker = tmp_path / "groupctl"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(OpsError, match="cannot write"):
        save_contexts(Contexts(blocker / "config.toml"))
    assert os.path.isfile(blocker)
