"""Quick fixes for the errors that carry a "did you mean": the rules name the wrong token and the right one.

The rules write ``...; did you mean 't'?`` (``shapetorch._rules.errors.did_you_mean``) after a message
whose first quoted name is the culprit: an einops axis (``axis 'tt' appears on the right side only``), a
keyword size (``axis 'hh' was given a size but is not used``), a reduction (``unknown reduction 'summ'``),
an einsum output letter or a dtype name. The fix replaces that token in the source the error points at:
inside a string literal (a pattern, an equation, a reduction's name) or as a keyword argument.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_SUGGESTION = re.compile(r"did you mean '([^']+)'\?")
_QUOTED = re.compile(r"'([^']+)'")


@dataclass(frozen=True)
class Edit:
    """Replace (line, column)..(line, end_column), 0-based, with ``new_text``."""

    line: int
    column: int
    end_column: int
    new_text: str
    old_text: str


def suggestion(message: str) -> tuple[str, str] | None:
    """(wrong, right) from a message with a "did you mean", or None."""
    right = _SUGGESTION.search(message)
    if right is None:
        return None
    wrong = next((m.group(1) for m in _QUOTED.finditer(message) if m.group(1) != right.group(1)), None)
    return (wrong, right.group(1)) if wrong is not None else None


def _word(text: str, name: str, start: int = 0) -> int:
    """Where ``name`` stands alone in ``text`` (not part of a longer name), or -1."""
    m = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w.])").search(text, start)
    return m.start() if m else -1


def fix(lines: list[str], line: int, column: int, end_line: int, end_column: int, message: str) -> Edit | None:
    """The edit that applies the suggestion of ``message`` inside the error's range of ``lines``."""
    found = suggestion(message)
    if found is None:
        return None
    wrong, right = found
    # the token in the error's range: the call's strings first (a pattern, an equation), then its keywords
    span = "\n".join(lines[line:end_line + 1])
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(span).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    first = column
    last = end_column if end_line == line else len(lines[end_line]) if end_line < len(lines) else 0

    def inside(row: int, col: int) -> bool:
        return (row, col) >= (0, first) and (row, col) <= (end_line - line, last)

    for kind in (tokenize.STRING, tokenize.NAME):
        for i, tok in enumerate(tokens):
            if tok.type != kind or tok.start[0] != tok.end[0] or not inside(tok.start[0] - 1, tok.start[1]):
                continue
            if kind == tokenize.STRING:
                at = _in_string(tok.string, wrong)
                if at < 0:
                    continue
                col = tok.start[1] + at
            else:  # a keyword size: ``hh=4``
                nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                if tok.string != wrong or nxt is None or nxt.string != "=":
                    continue
                col = tok.start[1]
            row = line + tok.start[0] - 1
            return Edit(row, col, col + len(wrong), right, wrong)
    return None


def _in_string(literal: str, wrong: str) -> int:
    """Where ``wrong`` is a name of its own in a string literal (an einsum letter: in the output term)."""
    if len(wrong) == 1 and "->" in literal and wrong.isalpha():
        arrow = literal.index("->")
        at = literal.find(wrong, arrow + 2)
        return at
    return _word(literal, wrong, 1)
