"""Run the benchmarks and write their results to benchmarks/results/<name>.json.

python benchmarks/run.py            # every benchmark
python benchmarks/run.py nsmcore    # one of them
python benchmarks/run.py --quick    # skip the slow baselines
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

from benchmarks.common import write  # noqa: E402

BENCHMARKS = [
    "nsmcore",
    "workspace",
    "parsers",
    "agreement",
    "gold",
    "verifier",
    "export",
    "raw_export",
    "evaluation",
    "evaluation_view",
    "rules",
    "training",
    "parser",
    "jobs",
    "api_import",
    "search",
    "queue",
    "profiles",
    "load",
]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks to run: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="skip slow baselines")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    missed = 0
    for name in args.names or BENCHMARKS:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        print(f"== {name}")
        figures = module.run(quick=args.quick)
        if not figures:  # the benchmark's data is absent: keep any earlier results
            print("  (no figures; nothing written)")
            continue
        for f in figures:
            target = ""
            if "target" in f:
                target = f"  target {f['target']}: {'met' if f['met'] else 'MISSED'}"
                missed += not f["met"]
            value = f["value"]
            # a number with its thousands; a table of them (bench_parser's per slot) as it is
            shown = f"{value:>14,}" if isinstance(value, int | float) else str(value)
            print(f"  {f['name']:55} {shown} {f['unit']}{target}")
        print(f"  -> {write(name, figures).relative_to(ROOT)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
