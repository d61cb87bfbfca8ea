# Save a checkpoint (model, optimizer, epoch, loss) with torch.save, load it into fresh objects and resume;
# the resumed run must continue exactly where the first one stopped.
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(32, 4)
Y = (X.sum(1, keepdim=True) > 0).float()


def make():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    return model, torch.optim.Adam(model.parameters(), lr=0.05)


def train(model, opt, epochs):
    for _ in range(epochs):
        opt.zero_grad()
        loss = nn.BCEWithLogitsLoss()(model(X), Y)
        loss.backward()
        opt.step()
    return loss


model, opt = make()
loss = train(model, opt, 3)
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
            "loss": loss}, path)
reference = train(model, opt, 3)
print(f"continued without saving: {reference.item():.5f}")

model2, opt2 = make()
checkpoint = torch.load(path, weights_only=True)
model2.load_state_dict(checkpoint["model_state_dict"])
opt2.load_state_dict(checkpoint["optimizer_state_dict"])
print("resumed from epoch", checkpoint["epoch"], f"loss {checkpoint['loss']:.5f}")
model2.train()
resumed = train(model2, opt2, 3)
print(f"resumed: {resumed.item():.5f}")
print(torch.allclose(resumed, reference), sorted(checkpoint["model_state_dict"].keys()))
