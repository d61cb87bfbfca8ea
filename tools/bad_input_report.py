"""The differential bad-input fuzzer's tables: agreement with torch by kind of bad input and by family of op.

    python tools/bad_input_report.py                   # the table, and the disagreements by op
    python tools/bad_input_report.py --write-baseline  # record today's disagreements (tests/bad_input_baseline.json)

The baseline is a ratchet, not an allowance: tests/test_bad_input.py fails on any disagreement it does not
list, and on any listed one that has been fixed (so the list only shrinks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# as in the test suite (tests/conftest.py): every op's result is checked against its rules
os.environ.setdefault("SHAPETORCH_CHECK_RULES", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import _bad_input as fuzz  # noqa: E402

BASELINE = ROOT / "tests" / "bad_input_baseline.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-baseline", action="store_true")
    parser.add_argument("names", nargs="*", help="only these public functions")
    args = parser.parse_args()
    cases = fuzz.run(args.names or None)
    print(fuzz.table(cases))
    print()
    print(fuzz.table(cases, by="family"))
    bad = sorted((c for c in cases if c.verdict not in ("agree", "deliberate")), key=lambda c: c.key)
    print(f"\n{len(bad)} disagreements over {len({c.name for c in cases})} functions")
    for c in bad:
        print(f"  {c.key:<40} {c.verdict:<8} {c.detail}")
    kept = sorted((c for c in cases if c.verdict == "deliberate"), key=lambda c: c.key)
    print(f"\n{len(kept)} deliberate differences (docs/compatibility.md):")
    for c in kept:
        print(f"  {c.key:<40} {fuzz.DELIBERATE.get(c.key.removeprefix('Tensor.'), c.detail)}")
    if args.write_baseline:
        BASELINE.write_text(json.dumps({c.key: c.verdict for c in bad}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
