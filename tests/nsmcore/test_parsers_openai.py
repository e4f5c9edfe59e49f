"""The OpenAI-compatible backend against a small chat server the test starts on 127.0.0.1."""

import json

import pytest

from nsmcore.parsers import ParserUnavailable, make_parser
from nsmcore.schema import SLOT_NAMES, SLOTS, json_schema
from tests.explications import PRIDE
from tests.fake_openai import FakeChatServer, text_of

LEGAL = PRIDE.slots()


def parser(server, **options):
    return make_parser(
        "openai", base_url=server.base_url, model="test-model", sleep=lambda s: None, **options
    )


def test_the_request_carries_a_json_schema_generated_from_the_slots():
    with FakeChatServer(lambda payload: LEGAL) as server:
        result = parser(server, api_key="sk-test").parse_one("I won the race.")
    assert result.legal
    assert result.explication == PRIDE.replace()
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["json"]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert text_of(body) == "I won the race."
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema == json_schema()
    assert schema["required"] == list(SLOT_NAMES)
    assert schema["additionalProperties"] is False
    assert {name: p["enum"] for name, p in schema["properties"].items()} == {
        s.name: list(s.values) for s in SLOTS
    }
    # only standard keys: nothing a particular server invented
    assert set(body) == {"model", "messages", "temperature", "max_tokens", "response_format"}


def test_free_mode_sends_no_schema_and_is_a_different_parser():
    with FakeChatServer(lambda payload: "Here you go:\n```json\n" + json.dumps(LEGAL) + "\n```") as server:
        free = parser(server, mode="free")
        result = free.parse_one("I won the race.")
    assert result.legal  # JSON found inside prose and a code fence
    assert "response_format" not in server.requests[0]["json"]
    assert "for example" in server.requests[0]["json"]["messages"][-1]["content"]
    assert free.name == "openai-free:test-model"
    assert free.version.endswith("-free")


def test_an_illegal_value_is_recorded_with_slot_and_value_and_parsing_goes_on():
    def reply(payload):
        if text_of(payload) == "bad":
            return {**LEGAL, "trigger": "somebody-did"}
        return LEGAL

    with FakeChatServer(reply) as server:
        results = parser(server, concurrency=2).parse(["good", "bad", "good too"])
    assert [r.legal for r in results] == [True, False, True]
    bad = results[1]
    assert bad.explication is None
    assert [(p.slot, p.value) for p in bad.errors] == [("trigger", "somebody-did")]
    assert '"somebody-did"' in bad.raw_output


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("I think it is pride.", "holds no JSON object"),
        ('{"experiencer": "i"}', "missing"),
        (json.dumps({**LEGAL, "emotion": "pride"}), "unknown key"),
    ],
)
def test_unreadable_or_incomplete_replies_are_illegal_results(content, problem):
    with FakeChatServer(lambda payload: content) as server:
        result = parser(server, mode="free").parse_one("x")
    assert not result.legal
    assert problem in " ".join(p.message for p in result.errors)
    assert result.raw_output == content


def test_a_reply_without_message_content_is_an_illegal_result():
    with FakeChatServer(lambda payload: (200, json.dumps({"choices": []}))) as server:
        result = parser(server).parse_one("x")
    assert not result.legal
    assert "no message content" in result.errors[0].message


def test_server_errors_are_retried_with_backoff_then_succeed():
    calls = []
    waits = []

    def reply(payload):
        calls.append(1)
        return (503, '{"error": "busy"}') if len(calls) < 3 else LEGAL

    with FakeChatServer(reply) as server:
        p = make_parser("openai", base_url=server.base_url, model="m", sleep=waits.append, backoff=0.25)
        assert p.parse_one("x").legal
    assert len(calls) == 3
    assert waits == [0.25, 0.5]


def test_a_server_that_keeps_failing_makes_the_parser_unavailable():
    with FakeChatServer(lambda payload: (500, "boom")) as server:
        with pytest.raises(ParserUnavailable, match=r"after 3 attempts: HTTP 500: boom"):
            parser(server, retries=2).parse_one("x")
        assert len(server.requests) == 3


def test_a_refused_request_is_not_retried():
    with FakeChatServer(lambda payload: (401, '{"error": "bad key"}')) as server:
        with pytest.raises(ParserUnavailable, match="refused the request: HTTP 401"):
            parser(server).parse_one("x")
        assert len(server.requests) == 1


def test_a_slow_server_times_out_and_is_retried():
    with (
        FakeChatServer(lambda payload: LEGAL, delay=0.5) as server,
        pytest.raises(ParserUnavailable, match=r"after 2 attempts: .*timed out"),
    ):
        parser(server, timeout=0.1, retries=1).parse_one("x")


def test_an_unreachable_server_is_named():
    p = make_parser("openai", base_url="http://127.0.0.1:9/v1", model="m", retries=1, sleep=lambda s: None)
    with pytest.raises(ParserUnavailable, match=r"cannot reach http://127.0.0.1:9/v1/chat/completions"):
        p.parse(["a", "b"])


def test_missing_settings_are_named():
    with pytest.raises(ParserUnavailable, match="NSM_OPENAI_BASE_URL"):
        make_parser("openai", model="m")
    with pytest.raises(ParserUnavailable, match="NSM_OPENAI_MODEL"):
        make_parser("openai", base_url="http://x/v1")
