# A DCGAN on 16x16 noise images: ConvTranspose2d generator with BatchNorm, a LeakyReLU discriminator,
# BCELoss with real/fake labels from torch.full, Adam with betas=(0.5, 0.999), detach for the D step.
import torch
import torch.nn as nn

nz = 8
G = nn.Sequential(
    nn.ConvTranspose2d(nz, 16, 4, 1, 0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
    nn.ConvTranspose2d(16, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
    nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn.Tanh(),
)
D = nn.Sequential(
    nn.Conv2d(1, 8, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(8, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(16, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
)


def weights_init(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


G.apply(weights_init)
D.apply(weights_init)
crit = nn.BCELoss()
optD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
real = torch.rand(6, 1, 16, 16) * 2 - 1
fixed = torch.randn(6, nz, 1, 1)
for it in range(4):
    D.zero_grad()
    label = torch.full((6,), 1.0, dtype=torch.float)
    out = D(real).view(-1)
    errD_real = crit(out, label)
    errD_real.backward()
    D_x = out.mean().item()
    noise = torch.randn(6, nz, 1, 1)
    fake = G(noise)
    label.fill_(0.0)
    out = D(fake.detach()).view(-1)
    errD_fake = crit(out, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optD.step()
    G.zero_grad()
    label.fill_(1.0)
    out = D(fake).view(-1)
    errG = crit(out, label)
    errG.backward()
    optG.step()
    print(f"[{it}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} D(x): {D_x:.4f}")
with torch.no_grad():
    samples = G(fixed).detach().cpu()
print(samples.shape, f"{samples.min():.3f} {samples.max():.3f}")
