"""kernelindex_sdk._base.display: the escapes every printed form of record text goes through."""

from __future__ import annotations

from kernelindex_sdk._base.display import csv_cell, markdown_text, printable


# Hostile input: control, separator and bidi characters, markup, and spreadsheet formulas.
def test_the_helpers_escape_each_class() -> None:
    for char in ["\x00", "\x1b", "\x7f", "\x85", "\x9f", "\u2028", "\u2029", "\u202e", "\u2067"]:
        assert char not in printable(f"a{char}b")
        assert char not in markdown_text(f"a{char}b")
        cell = csv_cell(f"a{char}b")
        assert isinstance(cell, str)
        assert char not in cell
    assert markdown_text("a|b") == "a\\|b"
    assert markdown_text("vocab_size") == "vocab_size"
    assert markdown_text("_x_") == "\\_x\\_"
    for lead in "=+-@":
        assert csv_cell(f"{lead}1+1") == f"'{lead}1+1"
    # A tab or carriage return is made visible first: the cell starts with a backslash.
    assert csv_cell("\t=1") == "\\t=1"
    assert csv_cell("\r=1") == "\\r=1"
    assert csv_cell(-1.5) == -1.5
    assert csv_cell(None) is None
