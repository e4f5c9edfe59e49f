"""The one rule every CSV the site writes follows (issue 24, OWASP's CSV injection guidance): a text
cell a spreadsheet would run as a formula gets a leading apostrophe; a number stays a number."""

from __future__ import annotations

import csv
import io
import math
from decimal import Decimal

import pytest

from annotator.csv_cells import csv_cell, csv_row, csv_writer, fixed


@pytest.mark.parametrize("text", ["=1+1", "+1", "-5", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("x")'])
def test_text_that_starts_a_formula_gets_a_leading_apostrophe(text):
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("text", ["a=b", "", "plain", "'=already", " =x", "5", "1-2", "é=@"])
def test_other_text_is_untouched(text):
    assert csv_cell(text) == text


@pytest.mark.parametrize("value", [-5, 5, -0.25, 0.0, Decimal("-0.2500"), float("-inf"), True, None])
def test_a_number_stays_a_number(value):
    assert csv_cell(value) is value


def test_a_value_written_as_text_is_judged_by_its_text():
    class Name:
        def __str__(self) -> str:
            return "@evil"

    assert csv_cell(Name()) == "'@evil"


def test_fixed_writes_a_figure_as_its_digits_and_a_number():
    assert str(fixed(-0.25, 4)) == "-0.2500" and csv_cell(fixed(-0.25, 4)) == Decimal("-0.2500")
    assert str(fixed(1 / 3, 6)) == "0.333333" and str(fixed(-0.0, 4)) == "-0.0000"
    assert str(fixed(0.0000001, 6)) == "0.000000" and str(fixed(123456.5, 1)) == "123456.5"
    assert fixed(None, 4) == "" and math.isnan(fixed(float("nan"), 4)) and str(fixed(-math.inf, 4)) == "-inf"


def test_the_writer_quotes_every_row_and_the_header():
    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(["@name", "n"])
    writer.writerows([["=cmd", -5], ["a=b", fixed(-0.5, 2)]])
    assert buffer.getvalue() == "'@name,n\n'=cmd,-5\na=b,-0.50\n"
    assert list(csv.reader(io.StringIO(buffer.getvalue())))[1] == ["'=cmd", "-5"]
    assert csv_row(["-1", 1]) == ["'-1", 1]
