# A LLaMA-style decoder block written from scratch: RMSNorm, rotary position embeddings (cos/sin tables from
# torch.outer, rotate_half), SwiGLU feed-forward, multi-head attention with einsum and a triu causal mask via
# masked_fill, checked against F.scaled_dot_product_attention(is_causal=True); next-token training with AdamW.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(seq_len, head_dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    freqs = torch.outer(torch.arange(seq_len).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        q, k, v = self.wqkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.einsum("bhqk,bhkd->bhqd", F.softmax(scores, dim=-1), v)
        self.last_check = (out - F.scaled_dot_product_attention(q, k, v, is_causal=True)).abs().max()
        return self.wo(out.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attn_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.attn = Attention(dim, n_heads)
        hidden = int(8 * dim / 3)
        self.w1, self.w3 = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=32, dim=32, n_heads=4, n_layers=2, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, n_heads) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        cos, sin = rope_tables(max_len, dim // n_heads)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx)
        for blk in self.blocks:
            x = blk(x, self.cos[:T], self.sin[:T])
        return self.head(self.norm(x))


torch.manual_seed(0)
model = TinyLlama()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
data = torch.randint(0, 32, (64, 13))
for step in range(12):
    batch = data[torch.randint(0, 64, (8,))]
    x, y = batch[:, :-1], batch[:, 1:]
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} ppl {math.exp(loss.item()):.2f} "
              f"sdpa agrees {bool(model.blocks[0].attn.last_check < 1e-5)}")
n_params = sum(p.numel() for p in model.parameters())
print(f"{n_params} parameters, buffers in state_dict: {[k for k in model.state_dict() if 'cos' in k]}")
