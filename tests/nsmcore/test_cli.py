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
