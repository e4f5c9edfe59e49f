"""nsmcore.jsonio: the two documents json cannot read are named, and the CLI exits 2 with the line."""

import io

import pytest

from nsmcore import jsonio
from nsmcore.cli import main


def test_too_deep_and_too_long_are_named_and_plain_json_reads():
    with pytest.raises(jsonio.JSONTooComplex, match="nested too deeply"):
        jsonio.loads("[" * 50_000 + "]" * 50_000)
    with pytest.raises(jsonio.JSONTooComplex, match=r"number too long to read \(more than \d+ digits\)"):
        jsonio.loads("9" * 5_001)
    with pytest.raises(ValueError, match="Expecting property name"):  # not JSON: json's own error
        jsonio.loads("{")
    assert jsonio.loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_the_cli_exits_2_naming_the_line():
    out, err = io.StringIO(), io.StringIO()
    lines = '{"text": "fine"}\n' + "[" * 50_000 + "]" * 50_000 + "\n"
    import sys

    stdin = sys.stdin
    sys.stdin = io.StringIO(lines)
    try:
        code = main(["route"], out=out, err=err)
    finally:
        sys.stdin = stdin
    assert code == 2 and "<stdin>:2: JSON nested too deeply to read" in err.getvalue()
