"""A tiny character-level transformer (embedding + causal self-attention blocks) that learns to continue a
short repeated text, then samples from it.

    python examples/char_transformer.py [--small]
"""

from __future__ import annotations

import sys

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import nn, optim

TEXT = "the quick brown fox jumps over the lazy dog. " * 8


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: st.Tensor) -> st.Tensor:
        h = self.ln1(x)
        t = x.shape[1]
        causal = st.arange(t).unsqueeze(0) > st.arange(t).unsqueeze(1)  # True = may not attend
        a, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class CharTransformer(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, layers: int, context: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab)

    def forward(self, idx: st.Tensor) -> st.Tensor:
        x = self.tok(idx) + self.pos(st.arange(idx.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.out(self.ln(x))


def main(small: bool) -> float:
    st.manual_seed(0)
    gen = st.Generator().manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = st.tensor([stoi[c] for c in TEXT])
    context, batch = 16, 16
    model = CharTransformer(len(chars), 32, 2, 1 if small else 2, context)
    opt = optim.AdamW(model.parameters(), lr=3e-3)
    steps = 5 if small else 100
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    loss = st.tensor(0.0)
    for step in range(steps):
        starts = st.randint(0, len(data) - context - 1, (batch,), generator=gen).tolist()
        xb = st.stack([data[s:s + context] for s in starts])
        yb = st.stack([data[s + 1:s + context + 1] for s in starts])
        opt.zero_grad()
        loss = F.cross_entropy(model(xb).reshape(-1, len(chars)), yb.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % max(1, steps // 5) == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    idx = data[:context].unsqueeze(0)
    with st.no_grad():
        for _ in range(20):
            logits = model(idx[:, -context:])[:, -1]
            idx = st.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
    print("sample:", repr("".join(chars[i] for i in idx[0].tolist())))
    print(f"final loss {loss.item():.4f}")
    return float(loss.item())


if __name__ == "__main__":
    main("--small" in sys.argv)
