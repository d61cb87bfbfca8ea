# A Transformer decoder language model with nn.TransformerDecoderLayer, a causal mask from
# nn.Transformer.generate_square_subsequent_mask, key padding masks, weight tying, and greedy decoding.
import math
import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self, vocab=20, d=16, heads=2, layers=2, max_len=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d))
        layer = nn.TransformerDecoderLayer(d, heads, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, layers)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.emb.weight
        self.d = d

    def forward(self, tokens, memory, pad_mask=None):
        T = tokens.size(1)
        h = self.emb(tokens) * math.sqrt(self.d) + self.pos[:, :T]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        h = self.dec(h, memory, tgt_mask=mask, tgt_key_padding_mask=pad_mask, tgt_is_causal=True)
        return self.head(h)


torch.manual_seed(0)
model = LM()
memory = torch.randn(3, 5, 16)
tokens = torch.randint(1, 20, (3, 9))
tokens[2, 6:] = 0
pad = tokens == 0
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for step in range(5):
    logits = model(tokens[:, :-1], memory, pad[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1), ignore_index=0)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(f"step={step} loss={loss.item():.4f} ppl={math.exp(loss.item()):.2f}")
model.eval()
out = torch.ones(3, 1, dtype=torch.long)
with torch.no_grad():
    for _ in range(6):
        nxt = model(out, memory)[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, nxt], dim=1)
print(out.tolist())
vals, idx = model(out, memory)[:, -1].softmax(-1).topk(3)
print(vals.shape, idx.tolist())
