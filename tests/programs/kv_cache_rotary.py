# A decoder-only transformer with rotary position embeddings (complex rotation through torch.view_as_complex
# and torch.polar), F.scaled_dot_product_attention with is_causal, and incremental decoding with a key/value
# cache that must reproduce the full forward pass; then greedy generation.
import torch
import torch.nn as nn
import torch.nn.functional as F


def rotary_freqs(head_dim, max_len, theta=10000.0):
    freqs = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    t = torch.arange(max_len).float()
    return torch.polar(torch.ones(max_len, head_dim // 2), torch.outer(t, freqs))


def apply_rotary(x, freqs):  # x: (b, h, n, d)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2).type_as(x)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.norm2 = nn.RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))

    def forward(self, x, freqs, cache=None):
        b, n, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        q, k = apply_rotary(q, freqs), apply_rotary(k, freqs)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        causal = cache is None or k.shape[2] == n
        att = F.scaled_dot_product_attention(q, k, v, is_causal=causal and n > 1)
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, dim))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=11, dim=16, heads=2, layers=2, max_len=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.norm = nn.RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("freqs", rotary_freqs(dim // heads, max_len), persistent=False)

    def forward(self, idx, caches=None, start=0):
        x = self.tok(idx)
        freqs = self.freqs[start : start + idx.shape[1]]
        for i, block in enumerate(self.blocks):
            x = block(x, freqs, None if caches is None else caches[i])
        return self.head(self.norm(x))


torch.manual_seed(0)
model = TinyLM()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
seqs = torch.randint(1, 11, (16, 1)) + torch.arange(12)[None, :] % 3  # counting patterns
seqs = seqs % 11
for step in range(40):
    logits = model(seqs[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), seqs[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1}: loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    prompt = seqs[:2, :5]
    full = model(prompt)
    caches = [{} for _ in model.blocks]
    steps = [model(prompt[:, :3], caches, 0)]
    for t in range(3, 5):
        steps.append(model(prompt[:, t : t + 1], caches, t))
    cached = torch.cat(steps, dim=1)
    print(f"cache matches full forward: {torch.allclose(cached, full, atol=1e-5)}; cache length {caches[0]['k'].shape[2]}")
    out = prompt
    caches = [{} for _ in model.blocks]
    logits = model(out, caches, 0)
    for t in range(6):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, nxt], dim=1)
        logits = model(nxt, caches, out.shape[1] - 1)
    print("generated:", out.tolist())
