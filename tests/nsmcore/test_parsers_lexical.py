"""The lexical baseline: cue lists as data, checked on load; transparent, deterministic output."""

import json
import re

import pytest

from nsmcore.parsers import ParserUnavailable, make_parser
from nsmcore.parsers.lexical import CUES_DIR, CueListError, LexicalParser, compile_cues
from nsmcore.schema import SLOT_BY_NAME


@pytest.fixture(scope="module")
def lexical():
    return LexicalParser()


def test_bundled_cue_lists_name_only_real_slots_and_values():
    data = json.loads((CUES_DIR / "v1.json").read_text())
    for slot, spec in data["slots"].items():
        assert set(spec["values"]) <= set(SLOT_BY_NAME[slot].values), slot
    compile_cues(data)  # raises on any bad cue


def test_cues_decide_slots_and_the_raw_output_names_the_words(lexical):
    result = lexical.parse_one("My boss yelled at me in front of everyone and I cried.")
    assert result.legal
    slots = result.explication.slots()
    assert slots["body"] == "yes"
    assert slots["others_know"] == "can-know"
    assert slots["evaluation"] == "feel-bad"
    raw = json.loads(result.raw_output)
    assert raw["body"]["cues"] == ["cried"]
    assert raw["others_know"]["cues"] == ["in front of"]


def test_text_without_cues_keeps_every_default(lexical):
    result = lexical.parse_one("Xyz qqq.")
    assert result.legal
    assert result.explication.slots() == {name: slot.default for name, slot in SLOT_BY_NAME.items()}


def test_fallback_applies_only_when_its_condition_holds(lexical):
    good = lexical.parse_one("It was a wonderful evening.").explication
    assert good.evaluation == "feel-good"
    assert good.eval_target == "event"  # no target cue: the fallback for a valenced text


def test_negated_want_is_not_read_as_want(lexical):
    assert lexical.parse_one("I did not want to go there.").explication.want == "not-want"
    assert lexical.parse_one("I wanted to go there.").explication.want == "want"


def test_typographic_apostrophes_are_read_like_plain_ones(lexical):
    assert lexical.parse_one("I didn\u2019t want it.").explication.want == "not-want"


def test_output_is_deterministic_and_versioned_by_content(lexical):
    texts = ["I passed my driving test!", "My dog died last week."]
    assert lexical.parse(texts) == LexicalParser().parse(texts)
    assert lexical.version.startswith("cues-v1-")


def test_a_changed_cue_list_has_another_version(tmp_path):
    data = json.loads((CUES_DIR / "v1.json").read_text())
    data["slots"]["body"]["values"]["yes"].append("blinked")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    assert LexicalParser(path).version != LexicalParser().version
    assert LexicalParser(path).parse_one("I blinked.").explication.body == "yes"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"slots": {"bodyy": {"values": {}}}}, "unknown slot(s) bodyy"),
        ({"slots": {"body": {"values": {"maybe": ["x"]}}}}, "body: 'maybe' is not an allowed value"),
        ({"slots": {"body": {"values": {"yes": ["(unclosed"]}}}}, "body=yes: bad cue '(unclosed'"),
        (
            {
                "slots": {
                    "trigger": {"values": {}, "fallback": {"when": {"body": ["yes"]}, "value": "nothing"}}
                }
            },
            "only on earlier slots",
        ),
    ],
)
def test_bad_cue_lists_are_refused_with_the_place_named(change, message):
    with pytest.raises(CueListError, match=re.escape(message)):
        compile_cues(change)


def test_make_parser_names_unknown_backends_and_cue_lists():
    with pytest.raises(ParserUnavailable, match="unknown parser backend 'gpt'; backends: lexical"):
        make_parser("gpt")
    with pytest.raises(ParserUnavailable, match="no cue list '9'"):
        make_parser("lexical", cues="9")
    assert make_parser().name == "lexical"


def test_cues_with_capitals_are_refused_since_texts_are_lower_cased():
    with pytest.raises(CueListError, match="has capitals"):
        compile_cues({"slots": {"body": {"values": {"yes": ["Cried"]}}}})
    compile_cues({"slots": {"body": {"values": {"yes": [r"cried\W"]}}}})  # an escape is not a capital


def test_capitals_in_the_text_do_not_matter(lexical):
    assert lexical.parse_one("I CRIED.").explication.body == "yes"
