# Prototypical networks for few-shot classification: episodes sampled with randperm, an embedding network,
# class prototypes as support means, negative squared Euclidean distances from torch.cdist as logits, and
# query accuracy; a cosine-similarity variant is evaluated beside it.
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
n_classes, per_class, dim = 10, 12, 6
centers = torch.randn(n_classes, dim) * 2
data = centers.repeat_interleave(per_class, dim=0) + torch.randn(n_classes * per_class, dim)
targets = torch.arange(n_classes).repeat_interleave(per_class)


def episode(n_way=4, k_shot=3, q_query=4):
    classes = torch.randperm(n_classes)[:n_way]
    support, query = [], []
    for c in classes.tolist():
        idx = (targets == c).nonzero(as_tuple=True)[0]
        chosen = idx[torch.randperm(idx.numel())[: k_shot + q_query]]
        support.append(data[chosen[:k_shot]])
        query.append(data[chosen[k_shot:]])
    return torch.stack(support), torch.stack(query)


# (no bias on the last layer: distances do not see a shift, and Adam would scale its rounding-noise gradient)
encoder = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 16, bias=False))
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)


def proto_logits(support, query):
    n_way, k_shot, _ = support.shape
    z_support = encoder(support.reshape(-1, dim)).reshape(n_way, k_shot, -1)
    prototypes = z_support.mean(dim=1)
    z_query = encoder(query.reshape(-1, dim))
    return -torch.cdist(z_query, prototypes) ** 2, prototypes, z_query


for it in range(60):
    support, query = episode()
    logits, _, _ = proto_logits(support, query)
    labels = torch.arange(support.size(0)).repeat_interleave(query.size(1))
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 20 == 19:
        acc = (logits.argmax(1) == labels).float().mean()
        print(f"episode {it + 1}: loss {loss.item():.4f} acc {acc.item():.3f}")

encoder.eval()
with torch.no_grad():
    accs, cos_accs = [], []
    for _ in range(10):
        support, query = episode(n_way=5)
        logits, prototypes, z_query = proto_logits(support, query)
        labels = torch.arange(5).repeat_interleave(query.size(1))
        accs.append((logits.argmax(1) == labels).float().mean().item())
        cos = F.cosine_similarity(z_query.unsqueeze(1), prototypes.unsqueeze(0), dim=-1)
        cos_accs.append((cos.argmax(1) == labels).float().mean().item())
    print(f"5-way eval: euclidean {sum(accs) / len(accs):.3f} cosine {sum(cos_accs) / len(cos_accs):.3f}")
    print(f"distance check: {torch.allclose(torch.cdist(z_query, prototypes), (z_query[:, None] - prototypes[None]).norm(dim=-1), atol=1e-4)}")
