"""Assertions on CliRunner results shared by the CLI tests."""

from __future__ import annotations


def assert_one_line_error(result, status: int, *fragments: str) -> str:
    """The CLI's expected-failure contract: exit `status`, nothing on stdout, exactly one stderr
    line `groupctl: error: ...` containing every fragment, no traceback. Returns that line."""
    lines = result.stderr.splitlines()
    assert result.exit_code == status, (result.exit_code, result.stdout, result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("groupctl: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.output
    assert result.stdout == ""
    return lines[0]
