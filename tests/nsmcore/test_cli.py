import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nsmcore.cli import main
from tests.explications import PRIDE as PRIDE_EXPLICATION

ROOT = Path(__file__).resolve().parents[2]
PRIDE = PRIDE_EXPLICATION.as_dict()


def run(argv, stdin_text=""):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin_text)
    try:
        code = main(argv, out, err)
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def jsonl(*objs) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def test_route_writes_one_json_line_per_input_line_with_every_field():
    bad = PRIDE | {"want": "wish"}
    code, out, _ = run(["route"], jsonl(PRIDE | {"id": "a"}, bad) + "\n")
    assert code == 0
    first, second = (json.loads(line) for line in out.splitlines())
    assert first == {
        "id": "a",
        "label": "pride",
        "rule_index": 7,
        "fired": ["pride", "joy"],
        "abstention_type": None,
        "rule_set_version": "1",
    }
    assert second["abstention_type"] == "illegal"
    assert second["errors"][0]["slot"] == "want"


def test_malformed_json_line_is_an_error_naming_the_line_and_nothing_is_written(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(jsonl(PRIDE) + "\n" + '{"want": \n')
    code, out, err = run(["route", str(path)])
    assert code == 2
    assert out == ""
    assert f"{path}:3: malformed JSON" in err


def test_missing_file_is_named():
    code, _, err = run(["check", "/nonexistent/x.jsonl"])
    assert code == 2 and "/nonexistent/x.jsonl: cannot read" in err


def test_keep_passes_record_fields_through_instead_of_reading_them_as_slots():
    record = PRIDE | {"text_id": "17", "flags": ["two-construals"]}
    _, out, _ = run(["route"], jsonl(record))
    assert json.loads(out)["abstention_type"] == "illegal"  # flags is not a slot
    _, out, _ = run(["route", "--keep", "text_id,flags"], jsonl(record))
    assert json.loads(out) | {} == json.loads(out)
    assert json.loads(out)["label"] == "pride"
    assert json.loads(out)["flags"] == ["two-construals"]


def test_render_prints_lines_and_fails_on_unreadable_input():
    code, out, err = run(["render"], jsonl(PRIDE, {"want": "x"}))
    assert code == 1
    first, second = (json.loads(line) for line in out.splitlines())
    assert {"slot": "agency", "value": "i", "text": "I did something"} in first["lines"]
    assert second["line"] == 2 and second["errors"]
    assert "line 2: want:" in err


def test_check_reports_legality_per_line_with_line_numbers():
    code, out, err = run(["check"], jsonl(PRIDE, PRIDE | {"body": "maybe"}))
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["legal"] for r in rows] == [True, False]
    assert "line 2: body: 'maybe' is not an allowed value; allowed: yes, no" in err
    assert run(["check"], jsonl(PRIDE))[0] == 0


def test_regions_prints_the_full_space_summary():
    code, out, _ = run(["regions"])
    result = json.loads(out)
    assert code == 0
    assert result["total"] == 1_866_240
    assert sum(result["regions"].values()) + result["abstain"] == result["total"]
    assert result["multi_rule"] > 0


def test_selfcheck_passes_and_fails_with_a_bad_rule_set(tmp_path):
    code, out, _ = run(["selfcheck"])
    assert code == 0 and "PASSED" in out
    broken = json.loads((ROOT / "nsmcore/data/rulesets/v1.json").read_text())
    broken["version"] = "bad"
    broken["rules"] = broken["rules"][:-1]  # no-emotion rule dropped
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken))
    code, out, _ = run(["selfcheck", "--rule-set", str(path)])
    assert code == 1
    assert "no-emotion prototype routes to abstain" in out


@pytest.mark.parametrize("argv", [["route", "--rule-set", "42"], ["regions", "--rule-set", "42"]])
def test_unknown_rule_set_is_an_input_error(argv):
    code, _, err = run(argv, "")
    assert code == 2 and "no bundled rule set version '42'" in err


def test_python_dash_m_nsmcore_runs_as_a_program():
    result = subprocess.run(
        [sys.executable, "-m", "nsmcore", "route"],
        input=jsonl(PRIDE),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["label"] == "pride"


def program(argv, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """``python -m nsmcore ARGV`` as a person runs it, stdin as raw bytes."""
    return subprocess.run(
        [sys.executable, "-m", "nsmcore", *argv], input=stdin, capture_output=True, cwd=ROOT, check=False
    )


# the second line holds "café" in Latin-1: one byte 0xe9 that UTF-8 cannot read
LATIN1 = (json.dumps({"text": "I was happy."}) + "\n" + '{"text": "I was in a caf\xe9."}\n').encode("latin-1")


@pytest.mark.parametrize("command", ["route", "render", "check", "parse"])
def test_a_file_that_is_not_utf8_is_an_input_error_naming_its_line(tmp_path, command):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(LATIN1)
    for argv, stdin, name in (([command, str(path)], b"", str(path)), ([command], LATIN1, "<stdin>")):
        result = program(argv, stdin)
        err = result.stderr.decode()
        assert result.returncode == 2, err
        assert "Traceback" not in err and err.count("\n") == 1
        assert f"{name}:2: not UTF-8 text (byte 0xe9 at column 25)" in err
        assert result.stdout == b""


def test_rule_set_and_cue_files_that_are_not_utf8_are_input_errors(tmp_path):
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"version": "caf\xe9"}'.encode("latin-1"))
    for argv in (["route", "--rule-set", str(bad)], ["parse", "--cues", str(bad)]):
        result = program(argv, jsonl({"text": "I was happy."}).encode())
        err = result.stderr.decode()
        assert result.returncode == 2 and "Traceback" not in err, err
        assert f"{bad}: not UTF-8 text" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "text, says",
    [
        ("[" * 50_000 + "]" * 50_000, "JSON nested too deeply to read"),
        ('{"x": ' + "9" * 5_001 + "}", "JSON number too long to read"),
    ],
)
def test_a_rule_set_too_complex_to_read_is_an_input_error(tmp_path, text, says):
    """Found by a security probe: such a rule set file gave a 25-line traceback and exit 1 (and,
    named by NSM_RULE_SET, stopped every command with one)."""
    bad = tmp_path / "deep.json"
    bad.write_text(text)
    for argv in (["route", "--rule-set", str(bad)], ["selfcheck", "--rule-set", str(bad)]):
        result = program(argv, jsonl({"text": "I was happy."}).encode())
        err = result.stderr.decode()
        assert result.returncode == 2 and "Traceback" not in err, err
        assert f"{bad}: {says}" in err and err.count("\n") == 1


def test_parse_pipes_straight_into_route_render_and_check(tmp_path):
    texts = tmp_path / "texts.jsonl"
    proud = {"id": "a", "text": "I was proud when I won the chess final."}
    texts.write_text(jsonl(proud, {"id": "b", "text": "It rained."}))
    parsed = program(["parse", str(texts)])
    assert parsed.returncode == 0, parsed.stderr.decode()
    explications = [json.loads(line)["explication"] for line in parsed.stdout.decode().splitlines()]

    routed = program(["route"], parsed.stdout)
    assert routed.returncode == 0, routed.stderr.decode()
    rows = [json.loads(line) for line in routed.stdout.decode().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    direct = program(["route"], jsonl(*explications).encode()).stdout.decode().splitlines()
    assert [{k: v for k, v in r.items() if k != "id"} for r in rows] == [json.loads(x) for x in direct]

    rendered = program(["render"], parsed.stdout)
    assert rendered.returncode == 0, rendered.stderr.decode()
    lines = [json.loads(line) for line in rendered.stdout.decode().splitlines()]
    assert [r["id"] for r in lines] == ["a", "b"] and all(r["lines"] for r in lines[:1])

    checked = program(["check"], parsed.stdout)
    assert checked.returncode == 0, checked.stderr.decode()
    assert [json.loads(line)["legal"] for line in checked.stdout.decode().splitlines()] == [True, True]

    # the same through a shell pipe, as the docs show it
    shell = subprocess.run(
        f"{sys.executable} -m nsmcore parse {texts} | {sys.executable} -m nsmcore route --keep id",
        shell=True, capture_output=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert shell.returncode == 0 and shell.stdout == routed.stdout


def test_an_illegal_parse_result_is_checked_as_illegal_not_skipped():
    record = {"id": "x", "parser": "openai:m", "explication": None, "legal": False, "errors": []}
    code, out, err = run(["check"], jsonl(record))
    assert code == 1 and json.loads(out)["legal"] is False and "line 1" in err
    code, out, _ = run(["route"], jsonl(record))
    assert code == 0 and json.loads(out)["abstention_type"] == "illegal" and json.loads(out)["id"] == "x"


def test_the_docs_give_the_selfcheck_counts_the_program_prints():
    code, out, _ = run(["selfcheck", "--json"])
    assert code == 0
    checked = {section["name"]: section["checked"] for section in json.loads(out)["sections"]}
    readme = " ".join((ROOT / "README.md").read_text().split())
    guide = " ".join((ROOT / "docs" / "nsmcore.md").read_text().split())
    for text in (readme, guide):
        assert f"{checked['canonical self-checks']} canonical checks" in text
        assert f"{checked['slot-flip consistency']} slot flips" in text
        assert f"{checked['renderer grammar']} renderer lines" in text
