"""mypy error codes: one per catalogue code, each a sub-code of its family.

``# type: ignore[matmul_error_inner_dimensions_do_not_match]`` silences one code;
``# type: ignore[shape-matmul]`` or ``--disable-error-code shape-matmul`` the whole family.
The codes come from ``shapetorch._rules.errors.CATALOGUE``, so a new catalogue entry gets a
code without touching the plugin.
"""

from __future__ import annotations

from mypy.errorcodes import ErrorCode

from shapetorch._rules.errors import CATALOGUE

CATEGORY = "shapetorch"

FAMILIES: dict[str, ErrorCode] = {}
CODES: dict[str, ErrorCode] = {}


def family_code(family: str) -> ErrorCode:
    code = FAMILIES.get(family)
    if code is None:
        code = FAMILIES[family] = ErrorCode(family, f"shapetorch: {family} rules", CATEGORY)
    return code


def rule_code(code: str) -> ErrorCode:
    """The mypy ErrorCode of a catalogue code (registered on first use if it is new)."""
    found = CODES.get(code)
    if found is None:
        entry = CATALOGUE.get(code)
        family = family_code(entry.family if entry is not None else "shape")
        meaning = entry.meaning if entry is not None else code
        found = CODES[code] = ErrorCode(code, meaning, CATEGORY, sub_code_of=family)
    return found


def register_all() -> None:
    """Register every catalogue code up front so ignores and --disable-error-code can name them."""
    for code in CATALOGUE:
        rule_code(code)
