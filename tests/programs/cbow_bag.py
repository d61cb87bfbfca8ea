# word2vec CBOW: a context window built with unfold over a token stream, nn.EmbeddingBag(mode="mean")
# over flattened contexts with offsets (and with per_sample_weights in "sum" mode), full-softmax training
# with a DataLoader, then nearest neighbours by cosine similarity.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

text = ("the cat sat on the mat the dog sat on the rug the cat chased the dog "
        "a bird sat on the tree the dog chased a bird the cat sat on the rug").split()
vocab = sorted(set(text))
stoi = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([stoi[w] for w in text])
window = 2
spans = ids.unfold(0, 2 * window + 1, 1)               # N, 5
centers = spans[:, window]
contexts = torch.cat([spans[:, :window], spans[:, window + 1:]], dim=1)
print(f"vocab {len(vocab)} examples {len(centers)} context shape {tuple(contexts.shape)}")


class CBOW(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, ctx):
        flat = ctx.reshape(-1)
        offsets = torch.arange(0, flat.numel(), ctx.size(1))
        return self.out(self.emb(flat, offsets))


model = CBOW(len(vocab))
loader = DataLoader(TensorDataset(contexts, centers), batch_size=8, shuffle=True)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(20):
    total, correct = 0.0, 0
    for ctx, tgt in loader:
        logits = model(ctx)
        loss = F.cross_entropy(logits, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(tgt)
        correct += (logits.argmax(1) == tgt).sum().item()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1} loss {total / len(centers):.4f} acc {correct / len(centers):.3f}")

# the bag's mean equals a manual mean of embedding rows
with torch.no_grad():
    bag = model.emb(contexts[:3])                       # 2-d input: one bag per row
    manual = model.emb.weight[contexts[:3]].mean(1)
    print(f"bag == manual mean: {torch.allclose(bag, manual, atol=1e-6)}")
    # distance-weighted context in sum mode with per_sample_weights
    summed = nn.EmbeddingBag.from_pretrained(model.emb.weight, mode="sum")
    w = torch.tensor([0.5, 1.0, 1.0, 0.5]).repeat(3)
    weighted = summed(contexts[:3].reshape(-1), torch.tensor([0, 4, 8]), per_sample_weights=w)
    print("weighted norms", [round(v, 4) for v in weighted.norm(dim=1).tolist()])
    E = F.normalize(model.emb.weight, dim=1)
    sims = E @ E[stoi["cat"]]
    best = sims.topk(4).indices.tolist()
    print("nearest to cat:", [vocab[i] for i in best])
