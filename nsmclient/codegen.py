"""The pieces of the generated client as Python source: the schema's types as Python's (unions,
literals, TypedDicts for its components), docstrings wrapped within the house's width, and one
method per operation with its path and query parameters typed. ``nsmclient.generate`` puts them
together into modules and writes them; like it, this module imports no Django."""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from typing import Any

WIDTH = 110
METHODS = ("get", "put", "post", "patch", "delete")
JSON = "application/json"
MULTIPART = "multipart/form-data"
FORM = "application/x-www-form-urlencoded"
#: names the hand-written layers (nsmclient.flows, nsmclient.client) use: no operation may take one
RESERVED = frozenset(
    {
        "close", "request", "paginate", "login", "import_items", "create_round", "next_assignment",
        "submit_annotation", "start_job", "wait_for_job", "download_export", "export_round",
    }
)  # fmt: skip


# --- the schema's types as Python's ----------------------------------------------------------------


def ref_name(ref: str) -> str:
    return identifier(ref.rsplit("/", 1)[-1], capital=True)


def identifier(name: str, *, capital: bool = False) -> str:
    """A Python name for a schema's name: invalid characters become _, a keyword gets a _ after it."""
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = ("X" if capital else "_") + ident
    return f"{ident}_" if keyword.iskeyword(ident) else ident


def _union(types: list[str]) -> str:
    seen: list[str] = []
    for part in types:
        for piece in _split_union(part):
            if piece not in seen:
                seen.append(piece)
    if "Any" in seen:
        return "Any"
    if "None" in seen:  # last, as people write it
        seen = [*(p for p in seen if p != "None"), "None"]
    return " | ".join(seen)


def _split_union(text: str) -> list[str]:
    """The members of a union written ``A | B[C | D]``: split at the top level only."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "["
        depth -= char == "]"
        if depth == 0 and text.startswith(" | ", i):
            parts.append(text[start:i])
            start = i + 3
    parts.append(text[start:])
    return parts


def _literal(values: list[Any]) -> str:
    members = [json.dumps(v, ensure_ascii=False) for v in values if v is not None]
    text = f"Literal[{', '.join(members)}]" if members else "None"
    return _union([text, "None"]) if None in values else text


def py_type(schema: dict[str, Any] | bool | None, *, request: bool = False) -> str:
    """The Python type of a schema (as text): ``request`` types a file field as FileInput."""
    if not isinstance(schema, dict) or not schema:
        return "Any"
    nullable = schema.get("nullable") is True
    if "$ref" in schema:
        text = ref_name(schema["$ref"])
    elif "allOf" in schema and len(schema["allOf"]) == 1:
        text = py_type(schema["allOf"][0], request=request)
    elif "oneOf" in schema or "anyOf" in schema:
        text = _union([py_type(s, request=request) for s in schema.get("oneOf", schema.get("anyOf"))])
    elif "enum" in schema:
        text = _literal(schema["enum"])
    else:
        text = _plain_type(schema, request=request)
    return _union([text, "None"]) if nullable else text


def _plain_type(schema: dict[str, Any], *, request: bool) -> str:
    kind = schema.get("type")
    if kind == "string":
        return "FileInput" if request and schema.get("format") == "binary" else "str"
    if kind == "null":
        return "None"
    if kind in ("integer", "number", "boolean"):
        return {"integer": "int", "number": "float", "boolean": "bool"}[kind]
    if kind == "array":
        return f"list[{py_type(schema.get('items'), request=request)}]"
    if kind == "object" or "properties" in schema or "additionalProperties" in schema:
        extra = schema.get("additionalProperties")
        return f"dict[str, {py_type(extra) if isinstance(extra, dict) else 'Any'}]"
    return "Any"


# --- text ------------------------------------------------------------------------------------------


def docstring(text: str, indent: str) -> list[str]:
    """A docstring's lines, each within WIDTH; backslashes and triple quotes escaped."""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    lines: list[str] = []
    for raw in text.splitlines():
        raw = raw.rstrip()
        room = WIDTH - len(indent) - (3 if not lines else 0)  # the first line opens with the quotes
        if len(raw) <= room:
            lines.append(raw)
            continue
        lead = re.match(r"\s*(?:[-*] |\w+: )?", raw).group(0)
        margin = len(lead) - len(lead.lstrip())
        hanging = " " * (
            margin + (2 if lead.lstrip()[:1] in "-*" and lead.strip() else 4 if lead.strip() else 0)
        )
        first, *rest = textwrap.wrap(raw, width=room, break_on_hyphens=False)
        lines.append(first)
        if rest:
            lines += textwrap.wrap(
                " ".join(rest),
                width=WIDTH - len(indent),
                initial_indent=hanging,
                subsequent_indent=hanging,
                break_on_hyphens=False,
            )
    if not lines:
        return []
    lines[0] = '"""' + lines[0]
    if lines[-1].endswith('"'):
        lines[-1] += " "
    if len(indent) + len(lines[-1]) + 3 <= WIDTH and len(lines) == 1:
        return [indent + lines[0] + '"""']
    return [f"{indent}{line}" if line else "" for line in lines] + [indent + '"""']


def block(head: str, items: list[str], tail: str, indent: str) -> list[str]:
    """``head item, item tail`` on one line when it fits, else one item a line with a trailing comma
    (ruff's magic trailing comma keeps it so)."""
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= WIDTH and "\n" not in one:
        return [one]
    return [f"{indent}{head}", *(f"{indent}    {item}," for item in items), f"{indent}{tail}"]


def _alias(name: str, text: str) -> list[str]:
    """``name = text``; a union too long for a line one member a line, as ruff wraps it."""
    one = f"{name} = {text}"
    members = _split_union(text)
    if len(one) <= WIDTH or len(members) == 1:
        return [one]
    return [f"{name} = (", f"    {members[0]}", *(f"    | {m}" for m in members[1:]), ")"]


def _fitted(line: str, text: str, name: str, late: list[list[str]]) -> str:
    """``text``, or when ``line`` (the line it goes on, with ``{}`` for it) would be too long, the
    name of an alias of it, defined after the classes."""
    if len(line.format(text)) <= WIDTH:
        return text
    late.append(_alias(name, text))
    return name


# --- components ------------------------------------------------------------------------------------


def _is_page(schema: dict[str, Any]) -> str | None:
    """The item type of a paginated list's schema (count, next, previous, results), else None."""
    props = schema.get("properties", {})
    if set(props) != {"count", "next", "previous", "results"} or props["results"].get("type") != "array":
        return None
    return py_type(props["results"].get("items"))


def component(name: str, schema: dict[str, Any], late: list[list[str]]) -> tuple[str, list[str]]:
    """(kind, lines): kind is "alias" (an enum's Literal, evaluated at once), "page" (after every
    class it may name) or "class"."""
    ident = ref_name(f"#/{name}")
    if "enum" in schema and "properties" not in schema:
        return "alias", block(f"{ident} = Literal[", _literal_members(schema["enum"]), "]", "")
    item = _is_page(schema)
    if item is not None:
        return "page", [f"{ident} = Page[{item}]"]
    props = schema.get("properties")
    additional = schema.get("additionalProperties", False)
    if not props or (additional is not False and additional is not None):
        return "page", [f"{ident} = {_plain_type({**schema, 'type': 'object'}, request=False)}"]
    request = name.endswith("Request") or _is_request(schema)
    return "class", _typed_dict(ident, schema, request=request, late=late)


def _is_request(schema: dict[str, Any]) -> bool:
    return any(p.get("format") == "binary" for p in schema.get("properties", {}).values())


def _literal_members(values: list[Any]) -> list[str]:
    return [json.dumps(v, ensure_ascii=False) if v is not None else "None" for v in values]


def _typed_dict(ident: str, schema: dict[str, Any], *, request: bool, late: list[list[str]]) -> list[str]:
    required = set(schema.get("required", []))
    plain = all(f.isidentifier() and not keyword.iskeyword(f) for f in schema["properties"])
    fields = []
    for field, prop in schema["properties"].items():
        wrap = "{}" if field in required else "NotRequired[{}]"
        line = f"    {field}: {wrap}" if plain else f'        "{field}": "{wrap}",'
        text = _fitted(line, py_type(prop, request=request), ident + camel(field), late)
        fields.append((field, wrap.format(text), prop))
    description = (schema.get("description") or "").strip()
    if not plain:  # keys Python cannot name: the functional form, its types as forward references
        items = [f"{json.dumps(f)}: {json.dumps(t)}" for f, t, _ in fields]
        lines = [f"{ident} = TypedDict(", f'    "{ident}",', "    {"]
        lines += [f"        {item}," for item in items]
        lines += ["    },", ")"]
        if description:
            lines = [f"# {line}".rstrip() for line in textwrap.wrap(description, WIDTH - 2)] + lines
        return lines
    lines = [f"class {ident}(TypedDict):"]
    if description:
        lines += [*docstring(description, "    "), ""]
    for field, text, prop in fields:
        note = _note(prop.get("description"))
        if note:
            lines += [f"    #: {line}" for line in textwrap.wrap(note, WIDTH - 7, break_on_hyphens=False)]
        lines.append(f"    {field}: {text}")
    return lines


# --- operations ------------------------------------------------------------------------------------

#: drf-spectacular lists an enum's choices in its description ("* `i` - i"): the type says them
CHOICES = re.compile(r"^\s*\* `[^`]*` - .*$", re.M)


def _note(text: str | None) -> str:
    return " ".join(CHOICES.sub("", text or "").split())


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name) if part)


def _body(op: dict[str, Any]) -> tuple[str, str, str] | None:
    """(how it is sent: json, multipart or form; its type; its component's name)."""
    content = op.get("requestBody", {}).get("content", {})
    for media, kind in ((JSON, "json"), (MULTIPART, "multipart"), (FORM, "form")):
        if media in content:
            schema = content[media].get("schema", {})
            return kind, py_type(schema, request=True), schema.get("$ref", "").rsplit("/", 1)[-1]
    return None


def _answer(op: dict[str, Any]) -> tuple[str, bool]:
    """(the return type, whether the answer is a file's bytes)."""
    types, binary = [], False
    for code, response in op.get("responses", {}).items():
        if not str(code).startswith("2"):
            continue
        content = response.get("content") or {}
        if not content:
            types.append("None")
        elif JSON in content:
            types.append(py_type(content[JSON].get("schema")))
        else:
            types.append("bytes")
            binary = True
    return (_union(types) if types else "None"), binary


def _parameter_type(op: dict[str, Any], param: dict[str, Any], aliases: list[list[str]]) -> str:
    """A parameter's type; an enum of its own gets an alias named after the operation and itself."""
    schema = param.get("schema") or {}
    if "enum" not in schema:
        return py_type(schema)
    alias = camel(op["operationId"]) + camel(param["name"])
    aliases.append(block(f"{alias} = Literal[", _literal_members(schema["enum"]), "]", ""))
    return _union([alias, "None"]) if schema.get("nullable") else alias


def _docs(op: dict[str, Any], route: str, method: str) -> str:
    params = [(p["name"], _note(p.get("description"))) for p in op.get("parameters", [])]
    lines = [f"    {identifier(name)}: {note}" for name, note in params if note]
    errors = [
        f"    {code}: {_note(response.get('description'))}".rstrip(": ")
        for code, response in sorted(op.get("responses", {}).items())
        if str(code) >= "400"
    ]
    description = (op.get("description") or op.get("summary") or "").strip()
    doc = [description, ""] if description else []
    doc.append(f"{method.upper()} {route}")
    if lines:
        doc += ["", "Parameters:", *lines]
    if errors:
        doc += ["", "Errors (nsmclient.ApiError and its subclasses):", *errors]
    return "\n".join(doc)


def operation(
    route: str,
    method: str,
    op: dict[str, Any],
    files: dict[str, tuple[str, ...]],
    aliases: list[list[str]],
    late: list[list[str]],
) -> list[str]:
    name = identifier(op["operationId"])
    if name in RESERVED:
        raise ValueError(f"operationId {name!r} is a name the client's own methods use: rename one")
    params = op.get("parameters", [])
    path_params = sorted(  # in the path's order, not the schema's alphabetical one
        (p for p in params if p.get("in") == "path"), key=lambda p: route.find("{" + p["name"] + "}")
    )
    query_params = [p for p in params if p.get("in") == "query"]
    body = _body(op)
    answer, binary = _answer(op)
    stem = camel(op["operationId"])
    answer = _fitted("    ) -> {}:", answer, f"{stem}Answer", late)

    args = ["self"]
    for param in path_params:
        text, ident = _parameter_type(op, param, aliases), identifier(param["name"])
        args.append(f"{ident}: {_fitted(f'        {ident}: {{}},', text, stem + camel(param['name']), late)}")
    if body is not None:
        required = op.get("requestBody", {}).get("required", False)
        args.append(f"body: {body[1]}" if required else f"body: {_union([body[1], 'None'])} = None")
    if query_params:
        args.append("*")
        for param in query_params:
            text, ident = _parameter_type(op, param, aliases), identifier(param["name"])
            text = _fitted(f"        {ident}: {{}} | None = None,", text, stem + camel(param["name"]), late)
            optional = f"{ident}: {_union([text, 'None'])} = None"
            args.append(f"{ident}: {text}" if param.get("required") else optional)

    lines = [""]
    if len(args) == 1:
        lines.append(f"    def {name}(self) -> {answer}:")
    else:
        lines += [f"    def {name}(", *(f"        {a}," for a in args), f"    ) -> {answer}:"]
    lines += docstring(_docs(op, route, method), "        ")

    call = [json.dumps(method.upper()), json.dumps(route)]
    if path_params:
        pairs = [f'"{p["name"]}": {identifier(p["name"])}' for p in path_params]
        call.append(_inline_dict("path_params", pairs))
    if query_params:
        pairs = [f'"{p["name"]}": {identifier(p["name"])}' for p in query_params]
        call.append(_inline_dict("query", pairs))
    if body is not None:
        call.append(f"{body[0]}=body")
        if files.get(body[2]):
            call.append(f"files=({', '.join(json.dumps(f) for f in files[body[2]])},)")
    if binary:
        call.append("binary=True")
    lines += _call_lines(call)
    return lines


def _inline_dict(keyword_: str, pairs: list[str]) -> str:
    return f"{keyword_}={{{', '.join(pairs)}}}"


def _call_lines(call: list[str]) -> list[str]:
    one = f"        return self._call({', '.join(call)})"
    if len(one) <= WIDTH:
        return [one]
    lines = ["        return self._call("]
    for arg in call:
        line = f"            {arg},"
        if len(line) > WIDTH and "={" in arg:  # a dict too long for its line: one entry a line
            key, inner = arg.split("={", 1)
            lines.append(f"            {key}={{")
            lines += [f"                {pair}," for pair in inner[:-1].split(", ")]
            lines.append("            },")
        else:
            lines.append(line)
    lines.append("        )")
    return lines
