# Kim's CNN for sentence classification: nn.Embedding.from_pretrained(freeze=False, padding_idx=0), parallel
# Conv1d filters of widths 3/4/5, max-over-time pooling, dropout, cross_entropy with label_smoothing,
# a no_grad evaluation with argmax/eq/float().mean() and a per-class report via tolist().
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    def __init__(self, pretrained, n_classes=3, n_filters=8, widths=(3, 4, 5)):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(pretrained, freeze=False, padding_idx=0)
        dim = pretrained.shape[1]
        self.convs = nn.ModuleList([nn.Conv1d(dim, n_filters, w) for w in widths])
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(n_filters * len(widths), n_classes)

    def forward(self, tokens):
        x = self.embedding(tokens).permute(0, 2, 1)
        pooled = [F.relu(conv(x)).max(dim=2).values for conv in self.convs]
        return self.fc(self.dropout(torch.cat(pooled, dim=1)))


torch.manual_seed(0)
vocab, dim = 50, 16
vectors = torch.randn(vocab, dim)
vectors[0] = 0
lengths = torch.randint(5, 12, (120,))
tokens = torch.randint(1, vocab, (120, 12))
tokens[torch.arange(12).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
labels = (tokens.clamp(max=20) > 10).sum(1) % 3
model = TextCNN(vectors)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
print("padding row grad-free:", model.embedding.padding_idx, model.embedding.weight.requires_grad)
for epoch in range(4):
    model.train()
    total, correct = 0.0, 0
    for i in range(0, 120, 40):
        xb, yb = tokens[i:i + 40], labels[i:i + 40]
        logits = model(xb)
        loss = F.cross_entropy(logits, yb, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * xb.size(0)
        correct += (logits.argmax(1) == yb).sum().item()
    print(f"epoch {epoch}: loss {total / 120:.4f} train acc {correct / 120:.3f}")
model.eval()
with torch.no_grad():
    preds = model(tokens).argmax(dim=1)
    acc = preds.eq(labels).float().mean()
    per_class = [(preds[labels == c] == c).float().mean().item() for c in range(3)]
print(f"eval acc {acc:.4f}", "per class", [round(a, 4) for a in per_class])
print("padding row still zero:", model.embedding.weight[0].abs().sum().item() == 0.0)
print("predictions", preds[:10].tolist(), "counts", torch.bincount(preds, minlength=3).tolist())
