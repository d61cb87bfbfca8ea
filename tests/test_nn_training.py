"""Training runs: shapetorch's loss curve matches torch's for the same initial weights and data, for an
MLP with SGD (momentum) and with Adam, and for a small CNN; the examples run (small sizes)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import shapetorch as st
from _nn_oracle import copy_state
from shapetorch import nn, optim

ROOT = Path(__file__).resolve().parents[1]


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(20, 32), lib.nn.ReLU(), lib.nn.Linear(32, 32), lib.nn.GELU(),
                             lib.nn.Linear(32, 5))


def cnn(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Conv2d(4, 6, 3), lib.nn.ReLU(),
                             lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten(), lib.nn.Linear(6, 3))


def curves(make, x, y, opt_name, opt_kw, steps=25, batch=16):
    torch.manual_seed(0)
    tm, sm = make(torch), make(st)
    copy_state(sm, tm)
    ot = getattr(torch.optim, opt_name)(tm.parameters(), **opt_kw)
    os_ = getattr(optim, opt_name)(sm.parameters(), **opt_kw)
    ls, lt = [], []
    for i in range(steps):
        sl = slice((i * batch) % len(x), (i * batch) % len(x) + batch)
        ot.zero_grad()
        loss_t = torch.nn.functional.cross_entropy(tm(torch.tensor(x[sl])), torch.tensor(y[sl]))
        loss_t.backward()
        ot.step()
        os_.zero_grad()
        loss_s = nn.functional.cross_entropy(sm(st.tensor(x[sl])), st.tensor(y[sl]))
        loss_s.backward()
        os_.step()
        lt.append(loss_t.item())
        ls.append(loss_s.item())
    return np.array(ls), np.array(lt)


@pytest.mark.parametrize("opt_name,opt_kw", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01})])
def test_mlp_loss_curve_matches_torch(opt_name, opt_kw):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 20)).astype(np.float32)
    y = (x[:, :5].argmax(1)).astype(np.int64)
    ls, lt = curves(mlp, x, y, opt_name, opt_kw)
    np.testing.assert_allclose(ls, lt, rtol=2e-4, atol=2e-5)
    assert ls[-5:].mean() < ls[:5].mean() * 0.8  # and it learns


def test_cnn_loss_curve_matches_torch():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 1, 8, 8)).astype(np.float32)
    y = (x[:, 0, :4].sum((1, 2)) > 0).astype(np.int64) + (x[:, 0, 4:].sum((1, 2)) > 0)
    ls, lt = curves(cnn, x, y, "SGD", {"lr": 0.05, "momentum": 0.9}, steps=12)
    np.testing.assert_allclose(ls, lt, rtol=5e-4, atol=5e-5)


@pytest.mark.parametrize("script", ["mlp_classifier.py", "small_cnn.py", "char_transformer.py"])
def test_example_runs(script, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [script, "--small"])
    runpy.run_path(str(ROOT / "examples" / script), run_name="__main__")
    out = capsys.readouterr().out
    assert "final loss" in out
