# Metric accumulation the way training loops write it: running sums on 0-d tensors with +=, /=,
# a confusion matrix, and logging with format specs on tensors.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
logits_all = torch.randn(5, 12, 4)
labels_all = torch.randint(0, 4, (5, 12))

total_loss = torch.tensor(0.0)
correct = 0
seen = 0
confusion = torch.zeros(4, 4, dtype=torch.long)
best = None
for step, (logits, labels) in enumerate(zip(logits_all, labels_all)):
    loss = F.cross_entropy(logits, labels)
    total_loss += loss
    preds = logits.argmax(dim=-1)
    correct += (preds == labels).sum()
    seen += labels.numel()
    for t, p in zip(labels, preds):
        confusion[t, p] += 1
    acc = correct / seen
    if best is None or loss < best:
        best = loss
    print(f"step {step}: loss {loss:.4f} running acc {acc:.3f} correct {correct}")

total_loss /= len(logits_all)
print(f"mean loss {total_loss:.4f}, best {best:.4f}")
print(confusion)
print("per-class recall", [f"{r:.2f}" for r in (confusion.diag() / confusion.sum(1).clamp(min=1)).tolist()])
s = logits_all.sum()
s -= 1
s *= 0.5
print(f"{s:10.3f}", f"{labels_all.max():d}", 3 in labels_all, len(labels_all), float(s) > 0)
