"""What the tests of the conventions and gold API share: a strict check of each answer against
the OpenAPI schema the project serves (a key the schema does not declare fails, as a null it does
not), the state a refused request must leave as it was, and a proposal."""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from adjudication.models import Convention, GoldChange, GoldItem, Vote


def _strict(node: Any) -> Any:
    """OpenAPI 3.0 to JSON Schema: ``nullable`` becomes a null branch, and an object that lists
    its properties takes no others (drf-spectacular leaves that open)."""
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: (_strict(v) if k != "example" else v) for k, v in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    if node.pop("nullable", False):
        return {"anyOf": [node, {"type": "null"}]}
    return node


def conforms(openapi: dict[str, Any], response: Any) -> Any:
    """The answer's body, after checking that its status is declared for the operation and that
    the body matches the declared schema."""
    path, method = response.request["PATH_INFO"], response.request["REQUEST_METHOD"].lower()
    templates = [t for t in openapi["paths"] if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", t), path)]
    assert templates, f"{path} is not in the schema"
    template = max(templates, key=lambda t: t.count("/") - t.count("{"))  # gold/open/ over gold/{item}/
    declared = openapi["paths"][template][method]["responses"]
    code = str(response.status_code)
    assert code in declared, f"{method.upper()} {template} answered {code}, declared {sorted(declared)}"
    body = response.json()
    schema = declared[code]["content"]["application/json"]["schema"]
    document = {"components": _strict(openapi["components"]), **_strict(schema)}
    jsonschema.Draft202012Validator(document).validate(body)
    return body


def golds(round_) -> dict[str, GoldItem]:
    return {g.item.source_id: g for g in GoldItem.objects.filter(round=round_).select_related("item")}


def written() -> tuple[int, ...]:
    """What any write of these endpoints would change."""
    return (
        Convention.objects.count(),
        Vote.objects.count(),
        GoldItem.objects.count(),
        GoldChange.objects.count(),
        GoldItem.objects.filter(status="resolved").count(),
        Convention.objects.exclude(status="proposed").count(),
        Convention.objects.filter(applied_at__isnull=False).count(),
    )


PROPOSAL = {"slot": "intensity", "value_a": "plain", "value_b": "very", "chosen": "plain",
            "rule": "Without a degree word the intensity is plain."}  # fmt: skip
