"""benchmarks/run.py, the one command that runs the benchmarks and writes their results: every
figure a benchmark returns is printed and written, a table of values (bench_parser's per-slot
accuracies) as well as a number."""

import json
import sys
import types

import pytest

from benchmarks import run


@pytest.fixture
def a_benchmark(monkeypatch, tmp_path):
    """A benchmark named "fake" whose figures the test gives, its results written under tmp_path."""

    def install(figures: list[dict]) -> None:
        module = types.ModuleType("benchmarks.bench_fake")
        module.run = lambda quick=False: figures
        monkeypatch.setitem(sys.modules, "benchmarks.bench_fake", module)
        monkeypatch.setattr(run, "BENCHMARKS", [*run.BENCHMARKS, "fake"])
        monkeypatch.setattr(run, "ROOT", tmp_path)
        monkeypatch.setattr(run, "write", lambda name, found: _write(tmp_path / f"{name}.json", found))
        monkeypatch.setattr(sys, "argv", ["run.py", "fake"])

    return install


def _write(path, figures):
    path.write_text(json.dumps(figures))
    return path


def test_a_figure_whose_value_is_a_table_is_printed_and_written(a_benchmark, capsys, tmp_path):
    by_slot = {"agency": 0.81, "trigger": 0.64}
    a_benchmark(
        [
            {"name": "lexical: per-slot accuracy by slot", "value": by_slot, "unit": "share"},
            {"name": "lexical: selective accuracy", "value": 0.1236, "unit": "share"},
        ]
    )
    assert run.main() == 0
    out = capsys.readouterr().out
    assert "lexical: per-slot accuracy by slot" in out and "'agency': 0.81" in out
    assert json.loads((tmp_path / "fake.json").read_text())[0]["value"] == by_slot


def test_numbers_print_with_their_thousands_and_a_missed_target_fails_the_run(a_benchmark, capsys):
    a_benchmark([{"name": "import", "value": 12345.5, "unit": "rows/s", "target": ">= 20,000", "met": False}])
    assert run.main() == 1
    assert "12,345.5 rows/s  target >= 20,000: MISSED" in capsys.readouterr().out
