"""axe-core in the browser tests: the accessibility checker from the npm registry (package.json
pins it, ``make test`` installs it with ``npm ci``), evaluated in the page as its own script."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
#: the impacts a page may not have
BLOCKING = ("serious", "critical")

RUN = """async () => {
    const result = await axe.run(document, {
        resultTypes: ['violations'],
        // WCAG 2.2 AA (its 24 px targets included) and axe's best practices
        runOnly: {type: 'tag', values: [
            'wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice',
        ]},
    });
    return result.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary.split('\\n')[1]),
        count: v.nodes.length,
    }));
}"""


@cache
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE}: run `npm ci` (make test does)")
    return AXE.read_text()


def axe_violations(page) -> list[dict]:
    """The page's serious and critical violations, each with up to three of its elements."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):  # once per page load
        page.evaluate(axe_source())
    return [v for v in page.evaluate(RUN) if v["impact"] in BLOCKING]


def describe(violations: list[dict]) -> str:
    return "\n".join(
        f"  {v['impact']} {v['id']} ({v['count']}x): {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in violations
    )
