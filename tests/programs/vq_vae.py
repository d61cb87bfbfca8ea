# A VQ-VAE bottleneck: a conv encoder, a codebook nn.Embedding, nearest codes by torch.cdist + argmin,
# the straight-through estimator z + (q - z).detach(), codebook and commitment losses, codebook usage
# perplexity from one_hot/bincount, and a dead-code restart by index assignment under no_grad.
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes=8, dim=4, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, dim)
        self.codebook.weight.data.uniform_(-1 / num_codes, 1 / num_codes)
        self.beta = beta

    def forward(self, z):                      # z: (B, C, H, W)
        b, c, h, w = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, c)
        dist = torch.cdist(flat, self.codebook.weight)
        idx = dist.argmin(dim=1)
        q = self.codebook(idx).view(b, h, w, c).permute(0, 3, 1, 2)
        loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(z, q.detach())
        q = z + (q - z).detach()
        onehot = F.one_hot(idx, self.codebook.num_embeddings).float()
        avg = onehot.mean(0)
        perplexity = torch.exp(-torch.sum(avg * torch.log(avg + 1e-10)))
        return q, loss, perplexity, idx


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, 4, 3, 1, 1))
        self.vq = VectorQuantizer()
        self.dec = nn.Sequential(nn.ConvTranspose2d(4, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, 1, 3, 1, 1))

    def forward(self, x):
        q, vq_loss, ppl, idx = self.vq(self.enc(x))
        return self.dec(q), vq_loss, ppl, idx


torch.manual_seed(0)
images = (torch.rand(16, 1, 8, 8) > 0.5).float()
model = VQVAE()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(8):
    recon, vq_loss, ppl, idx = model(images)
    rec = F.mse_loss(recon, images)
    loss = rec + vq_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    usage = torch.bincount(idx, minlength=8)
    if epoch % 2 == 0:
        print(f"epoch {epoch} rec {rec.item():.4f} vq {vq_loss.item():.5f} perplexity {ppl.item():.3f}")
        print("  usage", usage.tolist())
    dead = (usage == 0).nonzero(as_tuple=True)[0]
    if len(dead) > 0 and epoch == 3:
        with torch.no_grad():
            z = model.enc(images).permute(0, 2, 3, 1).reshape(-1, 4)
            model.vq.codebook.weight[dead] = z[: len(dead)]
        print("restarted codes", dead.tolist())
print("encoder grad flows:", model.enc[0].weight.grad.abs().sum().item() > 0)
