# Ordinal regression with rank-consistent thresholds (CORAL): one shared weight vector and K-1 ordered biases
# (a cumulative sum of softplus increments), binary cross-entropy on the "rank > k" targets, the predicted rank
# as the count of thresholds passed, mean absolute error, and a confusion matrix from torch.bincount.
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
K = 5
X = torch.randn(200, 6)
latent = X @ torch.tensor([1.0, -0.5, 0.8, 0.0, 0.3, -0.2]) + 0.3 * torch.randn(200)
cuts = torch.quantile(latent, torch.tensor([0.2, 0.4, 0.6, 0.8]))
y = torch.bucketize(latent, cuts)
print("class counts:", torch.bincount(y, minlength=K).tolist())


class Coral(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d, 16), nn.Tanh())
        self.score = nn.Linear(16, 1, bias=False)
        self.first = nn.Parameter(torch.zeros(1))
        self.steps = nn.Parameter(torch.zeros(k - 2))

    def thresholds(self):
        return torch.cat([self.first, self.first + torch.cumsum(F.softplus(self.steps), dim=0)])

    def forward(self, x):
        return self.score(self.features(x)) - self.thresholds()  # (n, K-1) logits of rank > k


def levels(y, k):
    return (y.unsqueeze(1) > torch.arange(k - 1).unsqueeze(0)).float()


model = Coral(6, K)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
train, test = slice(0, 150), slice(150, 200)
for epoch in range(80):
    logits = model(X[train])
    loss = F.binary_cross_entropy_with_logits(logits, levels(y[train], K), reduction="none").sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 20 == 19:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} thresholds {[round(t, 3) for t in model.thresholds().tolist()]}")

model.eval()
with torch.no_grad():
    probs = torch.sigmoid(model(X[test]))
    pred = (probs > 0.5).sum(1)
    mae = (pred - y[test]).abs().float().mean()
    print(f"test MAE {mae.item():.3f}, exact {(pred == y[test]).float().mean().item():.3f}")
    print("monotone probabilities:", bool((probs[:, 1:] <= probs[:, :-1] + 1e-6).all()))
    confusion = torch.bincount(y[test] * K + pred, minlength=K * K).reshape(K, K)
    print(confusion)
