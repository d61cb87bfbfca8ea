# Logistic regression trained with LBFGS and a closure, then with Adagrad; class weights via
# BCEWithLogitsLoss(pos_weight=...), a precision/recall report and a calibration check with torch.histc.
import torch
import torch.nn as nn

torch.manual_seed(0)
N, D = 200, 5
X = torch.randn(N, D)
true_w = torch.tensor([1.5, -2.0, 0.0, 0.7, 0.0])
y = ((X @ true_w + 0.3 * torch.randn(N)) > 0.5).float()
model = nn.Linear(D, 1)
crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([(y == 0).sum() / (y == 1).sum()]))
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20, history_size=5, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = crit(model(X).squeeze(1), y) + 1e-3 * model.weight.pow(2).sum()
    loss.backward()
    return loss


for epoch in range(4):
    loss = opt.step(closure)
    print(f"lbfgs epoch {epoch} loss {loss.item():.5f}")
with torch.no_grad():
    prob = torch.sigmoid(model(X).squeeze(1))
    pred = (prob > 0.5).float()
    tp = (pred * y).sum()
    precision = tp / pred.sum().clamp(min=1)
    recall = tp / y.sum()
    print(f"precision {precision:.3f} recall {recall:.3f} f1 {2 * precision * recall / (precision + recall):.3f}")
    print("weights", [f"{w:.2f}" for w in model.weight.squeeze().tolist()])
    hist = torch.histc(prob, bins=5, min=0, max=1)
    print("prob histogram", hist.int().tolist())
model2 = nn.Linear(D, 1)
opt2 = torch.optim.Adagrad(model2.parameters(), lr=0.3, lr_decay=1e-3)
for step in range(50):
    opt2.zero_grad()
    loss = nn.functional.binary_cross_entropy_with_logits(model2(X).squeeze(1), y)
    loss.backward()
    opt2.step()
print(f"adagrad loss {loss.item():.5f}")
