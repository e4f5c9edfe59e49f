"""The annotation page's radio buttons, built in Python (annotator.annotation_form) in place of a
loop in the template: the same HTML as that loop, escaping included."""

import pytest
from django.template import Context, Template

from annotator.annotation_form import VALUE_HELP, _choices_html, slot_groups
from nsmcore.schema import SLOTS

# the template loop _choices_html replaced, as it stood in templates/annotator/annotate.html
LOOP = Template(
    "{% for c in s.choices %}\n"
    '          <label class="choice" title="{{ c.help }}"><input type="radio" name="{{ s.name }}" '
    'value="{{ c.value }}"{% if c.value == s.current %} checked{% endif %}><kbd>{{ c.key }}</kbd> '
    '{{ c.value }}{% if c.value == s.default %}<span class="muted">*</span>{% endif %}'
    '<span class="help">{{ c.help }}</span></label>\n'
    "        {% endfor %}"
)


def looped(slot: dict) -> str:
    """The loop's HTML for ``slot`` (a slot of ``slot_groups``), its choices as the loop read them."""
    values = next(s.values for s in SLOTS if s.name == slot["name"])
    helps = VALUE_HELP[slot["name"]]
    choices = [{"value": v, "key": k + 1, "help": helps[v]} for k, v in enumerate(values)]
    return LOOP.render(Context({"s": {**slot, "choices": choices}}))


@pytest.mark.parametrize("slot", SLOTS, ids=lambda s: s.name)
def test_every_slots_choices_are_the_loops_whatever_is_chosen(slot):
    for current in (slot.default, slot.values[-1], "not-a-value"):
        (built,) = [
            s for g in slot_groups({slot.name: current}, None) for s in g["slots"] if s["name"] == slot.name
        ]
        assert built["choices_html"] == looped(built)
        assert built["choices_html"].count(" checked>") == (current in slot.values)


def test_what_the_page_shows_is_escaped_as_the_template_escaped_it(monkeypatch):
    slot = SLOTS[0]
    odd = slot.values[0]
    monkeypatch.setitem(
        VALUE_HELP, slot.name, {**VALUE_HELP[slot.name], odd: 'a "quoted" <b>help</b> & more'}
    )
    html = _choices_html(slot.name, slot.values, odd, slot.default)
    assert html == looped({"name": slot.name, "current": odd, "default": slot.default})
    assert "&quot;quoted&quot; &lt;b&gt;help&lt;/b&gt; &amp; more" in html
