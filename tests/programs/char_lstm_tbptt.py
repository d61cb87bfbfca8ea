# A character-level LSTM language model: embedding and decoder weights tied, truncated backpropagation through
# time with the (h, c) state detached between chunks, gradient clipping, perplexity, and sampling.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

text = "the quick brown fox jumps over the lazy dog. " * 6
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
vocab = len(chars)


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, hidden=24, layers=2, dropout=0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab_size)
        self.decoder.weight = self.embed.weight  # weight tying
        self.layers, self.hidden = layers, hidden

    def init_hidden(self, batch):
        weight = next(self.parameters())
        return (weight.new_zeros(self.layers, batch, self.hidden), weight.new_zeros(self.layers, batch, self.hidden))

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.decoder(out), hidden


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batchify(d, bsz):
    nbatch = d.size(0) // bsz
    return d[: nbatch * bsz].view(bsz, -1)


torch.manual_seed(0)
model = CharLSTM(vocab)
print(f"tied: {model.decoder.weight is model.embed.weight}, params: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
train = batchify(data, 4)
bptt = 12
for epoch in range(3):
    model.train()
    hidden = model.init_hidden(train.size(0))
    total, count = 0.0, 0
    for i in range(0, train.size(1) - 1, bptt):
        seq_len = min(bptt, train.size(1) - 1 - i)
        x, y = train[:, i : i + seq_len], train[:, i + 1 : i + 1 + seq_len]
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total += loss.item() * seq_len
        count += seq_len
    print(f"epoch {epoch}: loss {total / count:.4f} ppl {math.exp(total / count):.3f} last grad norm {norm:.4f}")

model.eval()
with torch.no_grad():
    hidden = model.init_hidden(1)
    x = torch.tensor([[stoi["t"]]])
    out = "t"
    for _ in range(20):
        logits, hidden = model(x, hidden)
        probs = F.softmax(logits[:, -1] / 0.8, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out += itos[nxt.item()]
        x = nxt
    print(repr(out))
    print("hidden requires grad:", hidden[0].requires_grad, tuple(hidden[1].shape))
