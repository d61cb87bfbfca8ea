# A GAN on 2-D points: two models, two optimizers, BCELoss with ones/zeros targets and .detach().
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCELoss()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
for step in range(6):
    real = torch.randn(16, 2) * 0.5 + torch.tensor([2.0, -1.0])
    z = torch.randn(16, 4)
    fake = G(z)
    real_labels = torch.ones(16, 1)
    fake_labels = torch.zeros(16, 1)
    opt_d.zero_grad()
    d_loss = criterion(D(real), real_labels) + criterion(D(fake.detach()), fake_labels)
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = criterion(D(fake), real_labels)
    g_loss.backward()
    opt_g.step()
    print(f"step {step}: D {d_loss.item():.4f} G {g_loss.item():.4f} D(x) {D(real).mean().item():.3f}")
