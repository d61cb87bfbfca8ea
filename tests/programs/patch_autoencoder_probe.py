# Patches and hooks: an image-patch autoencoder over nn.Unfold / nn.Fold, a full backward hook logging gradient
# norms, SubsetRandomSampler train/validation loaders, and a linear probe on the codes fitted by L-BFGS with a
# strong-Wolfe line search.
import torch
from torch import nn
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

torch.manual_seed(0)
images = torch.rand(24, 1, 8, 8)
labels = (images.mean(dim=(1, 2, 3)) > 0.5).float()
dataset = TensorDataset(images, labels)
indices = list(range(len(dataset)))
train_loader = DataLoader(dataset, batch_size=8, sampler=SubsetRandomSampler(indices[:16]))
val_loader = DataLoader(dataset, batch_size=8, sampler=SubsetRandomSampler(indices[16:]))


class PatchAutoencoder(nn.Module):
    def __init__(self, patch=4, code=6):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=patch, stride=patch)
        self.fold = nn.Fold(output_size=(8, 8), kernel_size=patch, stride=patch)
        self.encoder = nn.Linear(patch * patch, code)
        self.decoder = nn.Linear(code, patch * patch)

    def forward(self, x):
        patches = self.unfold(x).transpose(1, 2)  # (N, L, patch * patch)
        codes = torch.tanh(self.encoder(patches))
        recon = self.decoder(codes).transpose(1, 2)
        return self.fold(recon), codes


model = PatchAutoencoder()
grad_norms = []


def log_grad(module, grad_input, grad_output):
    grad_norms.append(grad_output[0].norm().item())


handle = model.decoder.register_full_backward_hook(log_grad)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    total = 0.0
    for x, _ in train_loader:
        recon, _ = model(x)
        loss = nn.functional.mse_loss(recon, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
    with torch.no_grad():
        val = sum(nn.functional.mse_loss(model(x)[0], x, reduction="sum").item() for x, _ in val_loader) / (8 * 64)
    print(f"epoch {epoch}: train {total / 16:.5f} val {val:.5f}")
handle.remove()
print(f"{len(grad_norms)} backward hook calls, last grad norm {grad_norms[-1]:.5f}")

with torch.no_grad():
    features = model(images)[1].mean(dim=1)
probe = nn.Linear(features.shape[1], 1)
lbfgs = torch.optim.LBFGS(probe.parameters(), lr=1, max_iter=20, line_search_fn="strong_wolfe")
criterion = nn.BCEWithLogitsLoss()


def closure():
    lbfgs.zero_grad()
    loss = criterion(probe(features).squeeze(1), labels)
    loss.backward()
    return loss


for step in range(3):
    loss = lbfgs.step(closure)
    print(f"lbfgs step {step}: loss {loss.item():.5f}")
accuracy = ((probe(features).squeeze(1) > 0).float() == labels).float().mean()
print(f"probe accuracy {accuracy:.3f}")
