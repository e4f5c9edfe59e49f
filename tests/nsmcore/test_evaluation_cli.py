"""`python -m nsmcore evaluate`: the fixture's figures, the JSON report, and bad input."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nsmcore.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
ITEMS = str(FIXTURES / "evaluation_items.jsonl")
PAIRS = str(FIXTURES / "counterfactual_pairs.jsonl")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


def test_evaluate_prints_a_table_and_writes_the_json_report(tmp_path):
    target = tmp_path / "report.json"
    options = ["--tier", "S", "--pass-name", "B", "--orders", "20", "--json", str(target)]
    options += ["--counterfactual", PAIRS, "--swap", "pride:joy"]
    code, out, err = run(["evaluate", "--input", ITEMS, *options])
    assert (code, err) == (0, "")
    assert "S, n=12, rule set v1, pass B" in out
    assert "selective accuracy          0.778 [0.40, 0.97]  (7/9)" in out
    assert "swap pride<->joy" in out and "counterfactual benchmark" in out
    doc = json.loads(target.read_text())
    assert doc["headline"]["accuracy"]["k"] == 7 and doc["headline"]["accuracy"]["n"] == 12
    assert doc["sensitivity"]["swaps"][0]["accuracy"]["k"] == 6
    assert doc["sensitivity"]["random"]["orders"] == 20
    assert doc["counterfactual"]["overall"]["causal"]["k"] == 1
    assert doc["flows"]["evidence"]["pass"] == "B"


def test_the_same_seed_gives_the_same_random_orders(tmp_path):
    reports = []
    for name in ("a", "b"):
        run(["evaluate", "--input", ITEMS, "--orders", "40", "--seed", "9", "--json", str(tmp_path / name)])
        reports.append(json.loads((tmp_path / name).read_text())["sensitivity"]["random"])
    assert reports[0] == reports[1] and reports[0]["seed"] == 9


def write(tmp_path, lines) -> str:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "malformed JSON"),
        ('{"reference_label": "elation", "explication": null}', "reference_label 'elation' is not one of"),
        ('{"explication": null}', "reference_label none given"),
        ('["a list"]', "expected a JSON object"),
        ('{"reference_label": "joy", "explication": null, "flags": "two"}', "flags must be a list"),
    ],
)
def test_a_bad_line_exits_2_naming_it_and_writes_nothing(tmp_path, bad, message):
    good = (FIXTURES / "evaluation_items.jsonl").read_text().splitlines()[0]
    path = write(tmp_path, [good, "", bad])
    target = tmp_path / "report.json"
    code, out, err = run(["evaluate", "--input", path, "--json", str(target)])
    assert code == 2
    assert f"{path}:3:" in err and message in err
    assert out == "" and not target.exists()
    assert list(tmp_path.iterdir()) == [Path(path)]  # no temporary file left either


@pytest.mark.parametrize(
    "args, message",
    [
        (["--swap", "guilt"], "expected two emotions as a:b"),
        (["--swap", "guilt:envy"], "'envy' is not a rule"),
        (["--orders", "-1"], "--orders must be >= 0"),
        (["--decay", "0"], "--decay must be in (0, 1]"),
        (["--rule-set", "9"], "no bundled rule set version '9'"),
    ],
)
def test_bad_options_exit_2(args, message):
    code, _, err = run(["evaluate", "--input", ITEMS, *args])
    assert code == 2 and message in err


def test_evaluate_takes_its_file_as_the_other_commands_do(tmp_path):
    """Found by a new user: `nsmcore evaluate FILE` was refused ("unrecognized arguments") while
    docs/nsmcore.md says each command reads FILE; FILE is --input's other spelling."""
    by_option = run(["evaluate", "--input", ITEMS, "--orders", "20", "--json", str(tmp_path / "a.json")])
    by_file = run(["evaluate", ITEMS, "--orders", "20", "--json", str(tmp_path / "b.json")])
    assert by_option[0] == by_file[0] == 0 and by_option[1] == by_file[1]
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    code, _, err = run(["evaluate", ITEMS, "--input", ITEMS])
    assert code == 2 and "give the file once" in err


def test_counterfactual_alone_and_pairs_parsed_with_the_lexical_parser(tmp_path):
    pair = {
        "id": "p",
        "family": "F1",
        "target_slots": ["others_know"],
        "x": {"text": "I lied to my friend and I feel terrible about it.", "emotion": "guilt"},
        "x_prime": {"text": "I lied to my friend and everyone found out.", "emotion": "shame"},
    }
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(pair) + "\n")
    code, out, err = run(["evaluate", "--counterfactual", str(path), "--json", str(tmp_path / "cf.json")])
    assert (code, err) == (0, "")
    doc = json.loads((tmp_path / "cf.json").read_text())
    assert doc["counterfactual"]["overall"]["n"] == 1 and "F1" in out

    del pair["x"]["text"]
    path.write_text(json.dumps(pair) + "\n")
    code, _, err = run(["evaluate", "--counterfactual", str(path)])
    assert code == 2 and f"{path}:1: x has neither an explication nor a text" in err


def test_a_bad_pair_line_is_named(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"id": "p", "family": "F1", "target_slots": []}\n')
    code, _, err = run(["evaluate", "--counterfactual", str(path)])
    assert code == 2 and f"{path}:1: 'target_slots' must be" in err


def test_nothing_to_evaluate_exits_2():
    code, _, err = run(["evaluate"])
    assert code == 2 and "nothing to evaluate" in err


def test_the_module_runs_and_documents_the_input_format():
    done = subprocess.run(
        [sys.executable, "-m", "nsmcore", "evaluate", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "reference_label" in done.stdout and "target_slots" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "nsmcore", "evaluate", "--input", "-", "--orders", "5"],
        cwd=ROOT,
        input=(FIXTURES / "evaluation_items.jsonl").read_text(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "(7/12)" in done.stdout
