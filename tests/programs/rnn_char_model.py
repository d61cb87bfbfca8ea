# A character-level nn.RNN language model (tanh, two layers), hidden state carried across batches with
# .detach() (truncated BPTT), and sampling from the softmax.
import torch
import torch.nn as nn

text = "the quick brown fox jumps over the lazy dog "
vocab = sorted(set(text))
idx = {c: i for i, c in enumerate(vocab)}
data = torch.tensor([idx[c] for c in text])


class CharRNN(nn.Module):
    def __init__(self, n, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(n, 8)
        self.rnn = nn.RNN(8, hidden, num_layers=2)
        self.head = nn.Linear(hidden, n)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h


torch.manual_seed(0)
model = CharRNN(len(vocab))
opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
h = None
seq = 10
for epoch in range(2):
    total = 0.0
    for i in range(0, len(data) - seq - 1, seq):
        x = data[i:i + seq].unsqueeze(1)
        y = data[i + 1:i + seq + 1].unsqueeze(1)
        logits, h = model(x, h)
        h = h.detach()
        loss = nn.functional.cross_entropy(logits.view(-1, len(vocab)), y.view(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 1.0)
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} mean loss {total / 4:.4f} h {tuple(h.shape)}")
with torch.no_grad():
    x, h, out = data[:1].unsqueeze(1), None, []
    for _ in range(12):
        logits, h = model(x, h)
        x = torch.multinomial(logits[-1].softmax(-1), 1).view(1, 1)
        out.append(vocab[x.item()])
print("".join(out))
