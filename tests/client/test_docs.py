"""The Python examples of docs/api.md are Python, and every method they call is one the client has:
a renamed operation fails here, not in a reader's script."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings

from nsmclient import Client

CLIENTS = {"api", "alice", "carol"}


def examples() -> list[str]:
    text = (Path(settings.BASE_DIR) / "docs" / "api.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_api_docs_examples_parse_and_call_only_methods_the_client_has():
    blocks = examples()
    assert len(blocks) >= 10
    called = set()
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in CLIENTS
            ):
                called.add(node.attr)
    assert {"import_items", "paginate", "wait_for_job", "rounds_gold_resolve_create"} <= called
    assert sorted(name for name in called if not hasattr(Client, name)) == []
