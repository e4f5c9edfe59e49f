"""Issue 25: every string a person reads is marked for translation, and German is complete.

The template check reads each template the way Django's lexer does: what is left once the tags,
variables, comments and translate blocks are taken out must hold no words, neither between the
tags nor in the attributes a person reads (title, aria-label, placeholder, alt, a button's value).
What the paper fixes (the NSM vocabulary, slot and rule names, the emotion labels) and the names of
formats are not words of the interface, and are listed below with that reason.
"""

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from django.template.base import Lexer, TokenType

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
CATALOGUE = ROOT / "locale" / "de" / "LC_MESSAGES"
SEEN = {"title", "aria-label", "placeholder", "alt", "aria-description", "aria-roledescription"}
HOLE = "\x00"  # where a tag or a variable stood

# words the interface shows as they are in every language: the product's and the formats' names
KEPT = {"nsm-audit", "NSM", "API", "JSON", "JSONL", "CSV", "HTML", "OpenAPI", "LoRA", "NLI", "EmoExpl"}
# Django's own admin and the API browser bring their own translations
NOT_OURS = {"drf_spectacular", "admin", "rest_framework"}


class Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in {"script", "style"}:
            self.skipping += 1
        attributes = dict(attrs)
        for name, value in attrs:
            shown = name in SEEN or (
                name == "value" and tag == "input" and attributes.get("type") in {"submit", "button"}
            )
            if shown and value:
                self.found.append(value)

    def handle_endtag(self, tag):
        if tag in {"script", "style"}:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.found.append(data)


def words(text: str) -> list[str]:
    return [
        w
        for w in re.findall(r"[A-Za-z][A-Za-z'\u2019-]*[A-Za-z]", text.replace(HOLE, " "))
        if w not in KEPT and not w.isupper()  # upper case: a slot, a key or a format, never prose
    ]


def unmarked(source: str) -> list[str]:
    """The words of a template outside any translate tag or block."""
    kept, depth = [], 0
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0] if token.contents else ""
            if name in {"blocktranslate", "blocktrans", "comment"}:
                depth += 1
            elif name in {"endblocktranslate", "endblocktrans", "endcomment"}:
                depth -= 1
            kept.append(HOLE)
        elif token.token_type == TokenType.TEXT and not depth:
            kept.append(token.contents)
        else:
            kept.append(HOLE)
    reader = Reader()
    reader.feed("".join(kept))
    reader.close()
    return [w for text in reader.found for w in words(text)]


def test_the_check_finds_an_unmarked_word_and_passes_a_marked_one():
    assert unmarked('<p title="Open it">{% translate "Open" %}</p>') == ["Open", "it"]
    assert unmarked("<h1>Gold {{ n }}</h1>") == ["Gold"]
    assert unmarked("{% blocktranslate %}Gold {{ n }}{% endblocktranslate %}<b>{{ slot }}</b> · CSV") == []
    assert unmarked("<script>let hidden = 1</script>{# a note #}") == []


def test_every_template_marks_its_words():
    left = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        if path.relative_to(TEMPLATES).parts[0] in NOT_OURS:
            continue
        found = unmarked(path.read_text())
        if found:
            left[path.relative_to(TEMPLATES).as_posix()] = " ".join(found)[:200]
    assert not left, "\n".join(f"{name}: {text}" for name, text in left.items())


def entries(po: str) -> list[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) of each entry of a catalogue, the header left out."""
    found = []
    for block in po.split("\n\n"):
        ids = re.findall(r'^msgid "(.*)"$((?:\n".*")*)', block, re.M)
        strs = re.findall(r'^msgstr(?:\[0\])? "(.*)"$((?:\n".*")*)', block, re.M)
        if not ids:
            continue
        msgid = ids[0][0] + "".join(re.findall(r'"(.*)"', ids[0][1]))
        msgstr = strs[0][0] + "".join(re.findall(r'"(.*)"', strs[0][1])) if strs else ""
        if msgid:
            found.append((msgid, msgstr, "#, fuzzy" in block or "fuzzy" in block.split("msgid")[0]))
    return found


def test_german_is_complete_and_compiled():
    for domain in ("django", "djangojs"):
        po = (CATALOGUE / f"{domain}.po").read_text()
        found = entries(po)
        assert len(found) >= (1000 if domain == "django" else 4), domain
        assert not [m for m, s, _ in found if not s], f"{domain}: entries without a translation"
        assert not [m for m, _, fuzzy in found if fuzzy], f"{domain}: fuzzy entries"


def test_the_committed_catalogue_is_the_compiled_one(tmp_path):
    # the .mo files are committed so that a machine without gettext serves German; they must be
    # what msgfmt makes of the .po files (docs/translating.md: compilemessages after each edit)
    assert shutil.which("msgfmt"), "checking the catalogues needs GNU gettext's msgfmt: apt install gettext"
    for domain in ("django", "djangojs"):
        out = tmp_path / f"{domain}.mo"
        subprocess.run(["msgfmt", "--check", "-o", str(out), str(CATALOGUE / f"{domain}.po")], check=True)
        assert out.read_bytes() == (CATALOGUE / f"{domain}.mo").read_bytes(), f"{domain}: run compilemessages"
