# Autoregressive sampling from a small GRU language model: temperature, top-k filtering with topk and
# scatter, nucleus (top-p) filtering with sort/cumsum, torch.multinomial, @torch.no_grad() and
# torch.inference_mode(), and a greedy decode with a KV-free loop.
import torch
import torch.nn as nn
import torch.nn.functional as F

vocab, emb, hid = 20, 8, 16


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid, batch_first=True)
        self.out = nn.Linear(hid, vocab)

    def forward(self, idx, h=None):
        y, h = self.rnn(self.embed(idx), h)
        return self.out(y), h


def top_k_filter(logits, k):
    v, _ = torch.topk(logits, k)
    return logits.masked_fill(logits < v[..., [-1]], float("-inf"))


def top_p_filter(logits, p):
    sorted_logits, sorted_idx = torch.sort(logits, descending=True)
    cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    mask = remove.scatter(-1, sorted_idx, remove)
    return logits.masked_fill(mask, float("-inf"))


model = CharRNN()
seq = torch.randint(0, vocab, (4, 12))
opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
for it in range(8):
    logits, _ = model(seq[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab), seq[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"lm loss {loss.item():.4f}")


@torch.no_grad()
def greedy(model, start, steps):
    idx = start
    h = None
    out = [start]
    for _ in range(steps):
        logits, h = model(idx, h)
        idx = logits[:, -1].argmax(-1, keepdim=True)
        out.append(idx)
    return torch.cat(out, dim=1)


print("greedy", greedy(model, seq[:, :1], 6).tolist())

with torch.inference_mode():
    logits, _ = model(seq[:, :5])
    last = logits[:, -1, :] / 0.8
    k = top_k_filter(last, 5)
    print("finite after top-k", torch.isfinite(k).sum(dim=-1).tolist())
    p = top_p_filter(last, 0.9)
    print("finite after top-p", torch.isfinite(p).sum(dim=-1).tolist())
    probs = F.softmax(k, dim=-1)
    print("probs sum", probs.sum(-1))
    nxt = torch.multinomial(probs, num_samples=1)
    print("sampled", nxt.squeeze(-1).tolist(), nxt.shape)
    print("inference tensor", torch.is_inference(probs) if hasattr(torch, "is_inference") else probs.is_inference())
