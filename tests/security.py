"""What a Content-Security-Policy without 'unsafe-inline' refuses in a page's HTML."""

from __future__ import annotations

from html.parser import HTMLParser


class _Inline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "script" and "src" not in named and named.get("type") != "application/json":
            self._script = True
        if tag == "style":
            self.problems.append("<style> element")
        for name, _ in attrs:
            if name == "style":
                self.problems.append(f"style attribute on <{tag}>")
            elif name.startswith("on"):
                self.problems.append(f"{name} handler on <{tag}>")
            elif name.startswith("hx-on"):
                self.problems.append(f"{name} (htmx evaluates it as script) on <{tag}>")

    def handle_data(self, data: str) -> None:
        if self._script and data.strip():
            self.problems.append(f"inline <script>: {data.strip()[:60]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = False


def inline_code(html: str) -> list[str]:
    """Each inline script, event handler, style element or style attribute in ``html``."""
    parser = _Inline()
    parser.feed(html)
    return parser.problems
