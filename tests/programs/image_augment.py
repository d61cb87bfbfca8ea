# Image augmentation done with tensor ops: random flips with torch.flip, roll, reflect padding and random
# crops, F.interpolate resize, unfold into patches and fold back, and channel-wise normalisation.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
imgs = torch.rand(4, 3, 16, 16)
mean = imgs.mean(dim=(0, 2, 3), keepdim=True)
std = imgs.std(dim=(0, 2, 3), keepdim=True)
norm = (imgs - mean) / std
print("normalized", norm.mean().item(), norm.std().item())
flip = torch.rand(4) < 0.5
out = torch.where(flip[:, None, None, None], imgs.flip(-1), imgs)
print("flipped", int(flip.sum()), out.sum().item())
padded = F.pad(imgs, (2, 2, 2, 2), mode="reflect")
i, j = torch.randint(0, 5, (2,)).tolist()
crop = padded[:, :, i:i + 16, j:j + 16]
print("crop", tuple(crop.shape), crop.sum().item())
rolled = torch.roll(imgs, shifts=(1, -2), dims=(2, 3))
print("rolled", rolled[0, 0, 0, :4].tolist())
big = F.interpolate(imgs, size=(24, 24), mode="bilinear", align_corners=False)
small = F.interpolate(imgs, scale_factor=0.5, mode="nearest")
area = F.adaptive_avg_pool2d(imgs, 5)
print("resized", tuple(big.shape), tuple(small.shape), tuple(area.shape), big.mean().item())
patches = F.unfold(imgs, kernel_size=4, stride=4)
print("patches", tuple(patches.shape))
back = F.fold(patches, output_size=(16, 16), kernel_size=4, stride=4)
print("fold roundtrip", torch.allclose(back, imgs))
gray = (imgs * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
print("gray", tuple(gray.shape), gray.max().item())
jitter = (imgs * (1 + 0.2 * (torch.rand(4, 1, 1, 1) - 0.5))).clamp_(0, 1)
print("jitter", jitter.min().item(), jitter.max().item())
cut = imgs.clone()
cut[:, :, 4:8, 4:8] = 0
print("cutout zeros", (cut == 0).sum().item())
mix_lam = 0.7
perm = torch.randperm(4)
mixed = mix_lam * imgs + (1 - mix_lam) * imgs[perm]
print("mixup", mixed.mean().item())
rot = torch.rot90(imgs, k=1, dims=(2, 3))
print("rot90", rot[0, 0, 0, :3].tolist())
