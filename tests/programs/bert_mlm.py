# BERT-style masked language modelling: 15% masking with bernoulli, 80/10/10 replacement, labels of -100,
# a TransformerEncoder with src_key_padding_mask, tied output weights, and accuracy on the masked tokens.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, D, PAD, MASK = 30, 32, 0, 1
lengths = torch.tensor([12, 9, 12, 7, 10, 12])
B, T = len(lengths), int(lengths.max())
tokens = torch.randint(2, V, (B, T))
pad_mask = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)
tokens = tokens.masked_fill(pad_mask, PAD)


class MLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, T, D))
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D)
        self.out = nn.Linear(D, V)
        self.out.weight = self.emb.weight

    def forward(self, x, pad):
        h = self.enc(self.emb(x) + self.pos, src_key_padding_mask=pad)
        return self.out(self.norm(h))


def mask_tokens(x):
    labels = x.clone()
    prob = torch.full(x.shape, 0.15)
    chosen = torch.bernoulli(prob).bool() & ~pad_mask
    labels[~chosen] = -100
    inputs = x.clone()
    replace = torch.bernoulli(torch.full(x.shape, 0.8)).bool() & chosen
    inputs[replace] = MASK
    rand = torch.bernoulli(torch.full(x.shape, 0.5)).bool() & chosen & ~replace
    inputs[rand] = torch.randint(2, V, x.shape)[rand]
    return inputs, labels


model = MLM()
print("params", sum(p.numel() for p in model.parameters()))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(20):
    inputs, labels = mask_tokens(tokens)
    logits = model(inputs, pad_mask)
    loss = F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        m = labels != -100
        acc = (logits.argmax(-1)[m] == labels[m]).float().mean().item() if m.any() else float("nan")
        print(f"step {step:2d} loss {loss.item():.4f} masked {int(m.sum())} acc {acc:.3f}")
model.eval()
with torch.no_grad():
    probs = model(tokens, pad_mask).softmax(-1)
print("probs", tuple(probs.shape), f"{probs[0, 0].sum().item():.4f}")
