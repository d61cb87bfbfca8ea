# Attention masks as users build them: key padding from sequence lengths with arange < lengths, a causal mask
# from torch.triu(ones).bool(), masked_fill with -inf and torch.where, einsum-based multi-head attention checked
# against nn.MultiheadAttention with the same weights, and a masked mean-pooled classifier trained on top.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, T, D, H = 3, 6, 8, 2
lengths = torch.tensor([6, 4, 2])
x = torch.randn(B, T, D)
pad = torch.arange(T)[None, :] >= lengths[:, None]  # True where padded
causal = torch.triu(torch.ones(T, T), diagonal=1).bool()
print("padding mask:\n", pad.int())

mha = nn.MultiheadAttention(D, H, batch_first=True)
ref, ref_w = mha(x, x, x, key_padding_mask=pad, attn_mask=causal)


def einsum_attention(x, w_in, b_in, w_out, b_out, pad, causal):
    q, k, v = F.linear(x, w_in, b_in).chunk(3, dim=-1)
    q, k, v = (t.reshape(B, T, H, D // H) for t in (q, k, v))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D // H)
    mask = causal[None, None] | pad[:, None, None, :]
    scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, D)
    return F.linear(out, w_out, b_out), weights.mean(dim=1)


ours, ours_w = einsum_attention(x, mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.out_proj.bias,
                                pad, causal)
print(f"max |einsum - nn.MultiheadAttention| = {(ours - ref).abs().max().item():.2e}")
print("averaged weights agree:", torch.allclose(ours_w, ref_w, atol=1e-6))
print("row sums:", ours_w.sum(-1)[2].tolist())


class MaskedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(D, H, batch_first=True)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, x, pad):
        h, _ = self.attn(x, x, x, key_padding_mask=pad, need_weights=False)
        h = self.norm(x + h)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


data = torch.randn(32, T, D)
lens = torch.randint(2, T + 1, (32,))
pads = torch.arange(T)[None, :] >= lens[:, None]
data = torch.where(pads.unsqueeze(-1), torch.zeros(()), data)
y = (data[:, :, 0].sum(1) > 0).long()
model = MaskedClassifier()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(40):
    logits = model(data, pads)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        acc = (logits.argmax(-1) == y).float().mean().item()
        print(f"step {step + 1}: loss {loss.item():.4f} acc {acc:.3f}")
