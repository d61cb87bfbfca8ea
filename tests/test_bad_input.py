"""The differential bad-input fuzzer (tests/_bad_input.py) over every public function torch also has, and its
Tensor method.

Every variant must agree with torch: the same accept/reject, torch's builtin exception class and a code on
rejection, the same shape, dtype and values on acceptance. The disagreements that remain are listed in
tests/bad_input_baseline.json (made by ``python tools/bad_input_report.py --write-baseline``): a ratchet,
so a new disagreement fails, and so does a listed one that has been fixed (the list only shrinks).
"""

from __future__ import annotations

import json
from pathlib import Path

import _bad_input as fuzz

BASELINE = json.loads((Path(__file__).parent / "bad_input_baseline.json").read_text())


def test_bad_input_agrees_with_torch_beyond_the_baseline():
    cases = fuzz.run()
    assert len({c.name for c in cases}) >= 200, "the fuzzer must reach the registry, not a handful of ops"
    now = {c.key: c for c in cases if c.verdict not in ("agree", "deliberate")}
    kept = {c.key.removeprefix("Tensor.") for c in cases if c.verdict == "deliberate" and c.detail != fuzz.LEAK}
    stale = set(fuzz.DELIBERATE) - fuzz.ROUNDING - kept
    assert not stale, f"deliberate differences that no longer differ: {stale}"
    new = [f"{k}: {c.verdict} {c.detail}" for k, c in sorted(now.items()) if BASELINE.get(k) != c.verdict]
    fixed = sorted(k for k in BASELINE if k not in now)
    # every public name the fuzzer reaches draws a sample (OpInfo's, in float32, int64 or complex64, or a sampler of
    # its own), but those whose first argument is no tensor: a new op without one fails here
    assert fuzz.UNSAMPLED == set(fuzz.NO_TENSOR_INPUT), (
        f"no sample for {sorted(fuzz.UNSAMPLED - fuzz.NO_TENSOR_INPUT)} (give each a sampler in tests/_bad_input.py "
        f"SAMPLERS); listed as unsampleable but sampled: {sorted(fuzz.NO_TENSOR_INPUT - fuzz.UNSAMPLED)}")
    assert not new, "new disagreements with torch:\n" + "\n".join(new)
    assert not fixed, "fixed: remove from tests/bad_input_baseline.json (tools/bad_input_report.py):\n" + "\n".join(fixed)


def test_the_fuzzer_can_tell_a_disagreement():
    """A raw Python error, a wrong class and a silent answer are each seen (the judge is not a rubber stamp)."""
    import torch

    import shapetorch as st

    raw = fuzz._judge("f", "k", lambda lib, x, a, k: (_ for _ in ()).throw(ValueError("x")) if lib is st
                      else torch.ones(1)[5], torch.ones(2), (), {})
    assert raw.verdict == "raw"
    silent = fuzz._judge("f", "k", lambda lib, x, a, k: torch.ones(1)[5] if lib is torch else x, torch.ones(2), (), {})
    assert silent.verdict == "silent"
    values = fuzz._judge("f", "k", lambda lib, x, a, k: x + (1 if lib is st else 0), torch.ones(2), (), {})
    assert values.verdict == "values"
    agree = fuzz._judge("f", "k", lambda lib, x, a, k: x.sum(dim=True), torch.ones(2), (), {})
    assert agree.verdict == "agree", agree


def test_deliberate_differences_are_documented():
    """Each difference kept on purpose is named, with its reason, in docs/compatibility.md."""
    text = (Path(__file__).parents[1] / "docs" / "compatibility.md").read_text()
    missing = [k for k in fuzz.DELIBERATE if f"`{k}`" not in text]
    assert not missing, f"not in docs/compatibility.md: {missing}"
