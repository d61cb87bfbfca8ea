# A convolutional autoencoder that remembers where its maxima were: MaxPool2d(return_indices=True) paired with
# MaxUnpool2d, a PixelShuffle upsampling branch, patch statistics through nn.Unfold/nn.Fold, ConvTranspose2d,
# and a learning-rate schedule with MultiStepLR.
import torch
import torch.nn as nn
import torch.nn.functional as F


class UnpoolAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(2, stride=2, return_indices=True)
        self.mid = nn.Conv2d(4, 4, 3, padding=1)
        self.unpool = nn.MaxUnpool2d(2, stride=2)
        self.shuffle_conv = nn.Conv2d(4, 4 * 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.deconv = nn.ConvTranspose2d(8, 1, 3, padding=1)

    def forward(self, x):
        h = self.enc(x)
        pooled, idx = self.pool(h)
        m = F.relu(self.mid(pooled))
        a = self.unpool(m, idx, output_size=h.shape[-2:])
        b = self.shuffle(self.shuffle_conv(m))
        return self.deconv(torch.cat([a, b], dim=1)), idx


torch.manual_seed(0)
xs = torch.rand(12, 1, 8, 8)
xs = (xs > 0.6).float() * xs
model = UnpoolAE()
out, idx = model(xs[:2])
print("indices:", tuple(idx.shape), idx.dtype, idx[0, 0, 0].tolist())
unfold = nn.Unfold(kernel_size=2, stride=2)
fold = nn.Fold(output_size=(8, 8), kernel_size=2, stride=2)
patches = unfold(xs[:2])
print("patches:", tuple(patches.shape), "fold(unfold(x)) == x:", torch.equal(fold(patches), xs[:2]))

opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[10, 20], gamma=0.3)
for epoch in range(30):
    recon, _ = model(xs)
    # patch-wise loss: the mean error of each 2x2 patch, squared
    err = unfold(recon - xs).mean(dim=1)
    loss = F.mse_loss(recon, xs) + err.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: loss {loss.item():.5f} lr {opt.param_groups[0]['lr']:.5f}")
with torch.no_grad():
    recon, _ = model(xs[:1])
print(recon[0, 0, :2])
