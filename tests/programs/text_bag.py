# Text classification over variable-length token lists: a Dataset of Python lists, a collate_fn with
# pad_sequence and lengths, masked mean pooling, nn.EmbeddingBag with offsets as a second model, and
# accuracy over a DataLoader.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

vocab = 30


class Toks(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.items = []
        for i in range(24):
            n = 3 + i % 5
            toks = torch.randint(1, vocab, (n,), generator=g).tolist()
            self.items.append((toks, i % 2))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    seqs = [torch.tensor(s) for s, _ in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.tensor([y for _, y in batch])


class MeanPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, 8, padding_idx=0)
        self.fc = nn.Linear(8, 2)

    def forward(self, x, lengths):
        mask = (x != 0).unsqueeze(-1).float()
        pooled = (self.emb(x) * mask).sum(1) / lengths.unsqueeze(1)
        return self.fc(pooled)


dl = DataLoader(Toks(), batch_size=6, shuffle=False, collate_fn=collate)
model = MeanPool()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(4):
    total, correct = 0.0, 0
    for x, lengths, y in dl:
        logits = model(x, lengths)
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        correct += (logits.argmax(1) == y).sum().item()
    print(f"epoch {epoch} loss {total / len(dl):.4f} acc {correct / 24:.3f}")

bag = nn.EmbeddingBag(vocab, 4, mode="mean")
flat = torch.cat([torch.tensor(s) for s, _ in Toks().items[:4]])
offsets = torch.tensor([0] + [len(s) for s, _ in Toks().items[:3]]).cumsum(0)
print("bag", bag(flat, offsets).shape, offsets.tolist())
