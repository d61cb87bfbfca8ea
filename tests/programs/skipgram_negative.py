# Word2vec skip-gram with negative sampling: unigram^0.75 noise via torch.multinomial, two nn.Embedding
# tables, bmm scores, F.logsigmoid, SparseAdam-free plain SGD, and nearest neighbours by cosine similarity.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
corpus = ("the quick brown fox jumps over the lazy dog the dog sleeps the fox runs "
          "a quick dog jumps a lazy fox sleeps").split()
vocab = sorted(set(corpus))
stoi = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([stoi[w] for w in corpus])
counts = torch.bincount(ids, minlength=len(vocab)).float()
noise = counts.pow(0.75)
noise /= noise.sum()
pairs = []
for i in range(len(ids)):
    for j in range(max(0, i - 2), min(len(ids), i + 3)):
        if i != j:
            pairs.append((ids[i].item(), ids[j].item()))
centers = torch.tensor([p[0] for p in pairs])
contexts = torch.tensor([p[1] for p in pairs])


class SGNS(nn.Module):
    def __init__(self, V, d=12):
        super().__init__()
        self.inp = nn.Embedding(V, d)
        self.out = nn.Embedding(V, d)
        nn.init.uniform_(self.inp.weight, -0.5 / d, 0.5 / d)
        nn.init.zeros_(self.out.weight)

    def forward(self, c, o, neg):
        v = self.inp(c).unsqueeze(2)                 # B, d, 1
        u_pos = self.out(o).unsqueeze(1)             # B, 1, d
        u_neg = self.out(neg)                        # B, K, d
        pos = F.logsigmoid(torch.bmm(u_pos, v).squeeze())
        negs = F.logsigmoid(-torch.bmm(u_neg, v).squeeze(2)).sum(1)
        return -(pos + negs).mean()


model = SGNS(len(vocab))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(30):
    perm = torch.randperm(len(centers))
    total = 0.0
    for k in range(0, len(perm), 16):
        b = perm[k:k + 16]
        neg = torch.multinomial(noise, len(b) * 5, replacement=True).view(len(b), 5)
        loss = model(centers[b], contexts[b], neg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(b)
    if epoch % 10 == 0:
        print(f"epoch {epoch} loss {total / len(perm):.4f}")
E = F.normalize(model.inp.weight.detach(), dim=1)
sims = E @ E[stoi["fox"]]
best = sims.topk(3).indices.tolist()
print("near fox:", [vocab[i] for i in best])
print("embedding norm", model.inp.weight.norm().item())
