import pytest

from nsmcore.grammar import GrammarFileError, check_line, load_grammar, parse_grammar
from nsmcore.lexicon import lexicon_words, load_lexicon, tokenize


def test_lexicon_has_the_65_primes():
    lexicon = load_lexicon()
    assert len(lexicon.primes) == 65
    for prime in ("I", "SOMEONE", "DON'T WANT", "FOR SOME TIME", "LIKE/AS/WAY", "BECAUSE"):
        assert prime in lexicon.primes


def test_portmanteau_words_name_both_primes():
    assert set(load_lexicon().prime_of("can't")) == {"CAN", "NOT"}


def test_every_grammar_terminal_is_in_the_lexicon():
    assert load_grammar().terminals() <= lexicon_words() | {","}  # a comma joins two sentences


@pytest.mark.parametrize(
    "line",
    [
        "I feel something bad because of this",
        "I can't do this",
        "other people can know this",
        "I did something",
        "someone else feels something.",
        "for some time nothing happened",
        "maybe this will happen",
    ],
)
def test_prime_lines_in_renderer_frames_are_legal(line):
    assert check_line(line) == []


@pytest.mark.parametrize(
    "line, reason",
    [
        ("I feel something awful because of this", "'awful'"),
        ("I was furious", "'furious'"),
        ("this; happened", "'this;'"),
        ("this, happened", "frame"),
        ("I feels something", "frame"),
        ("something I feel", "frame"),
        ("because of this", "frame"),
        ("I feel something bad because of", "frame"),
        ("", "empty"),
    ],
)
def test_words_outside_the_lexicon_or_frames_are_illegal(line, reason):
    [problem] = check_line(line)
    assert reason in problem


def test_tokenize_lowercases_and_allows_only_a_final_full_stop():
    assert tokenize("  I Did SOMETHING. ") == ["i", "did", "something"]
    assert tokenize("this. happened") == ["this.", "happened"]


def test_grammar_file_errors_name_the_line():
    with pytest.raises(GrammarFileError, match="undefined nonterminal MISSING"):
        parse_grammar("LINE := i MISSING")
    with pytest.raises(GrammarFileError, match="line 2"):
        parse_grammar("LINE := i\nthis is not a rule")
    with pytest.raises(GrammarFileError, match="no LINE rule"):
        parse_grammar("OTHER := i")
