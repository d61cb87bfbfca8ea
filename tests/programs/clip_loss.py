# A CLIP-style contrastive model: two encoders projecting to a shared space, L2-normalised embeddings, a
# learnable temperature stored as log(1/0.07) and used through logit_scale.exp() with a clamp, a symmetric
# cross_entropy with label_smoothing, zero-shot classification by text prototypes, and recall@k.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
n_classes, n = 6, 96
labels = torch.arange(n) % n_classes
image_protos = torch.randn(n_classes, 20)
text_protos = torch.randn(n_classes, 12)
images = image_protos[labels] + 0.3 * torch.randn(n, 20)
texts = text_protos[labels] + 0.3 * torch.randn(n, 12)


class CLIP(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.image_enc = nn.Sequential(nn.Linear(20, 32), nn.GELU(), nn.Linear(32, dim))
        self.text_enc = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, dim))
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, img, txt):
        i = F.normalize(self.image_enc(img), dim=-1)
        t = self.text_enc(txt)
        t = t / t.norm(dim=1, keepdim=True)
        scale = self.logit_scale.exp().clamp(max=100)
        logits_per_image = scale * i @ t.t()
        return logits_per_image, logits_per_image.t()


model = CLIP()
loader = DataLoader(TensorDataset(images, texts, labels), batch_size=16, shuffle=True, drop_last=True)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=5e-3, total_steps=8 * len(loader))
for epoch in range(8):
    epoch_loss = 0.0
    for img, txt, _ in loader:
        li, lt = model(img, txt)
        target = torch.arange(len(img))
        loss = (F.cross_entropy(li, target, label_smoothing=0.1) + F.cross_entropy(lt, target, label_smoothing=0.1)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        epoch_loss += loss.item()
    if epoch % 2 == 1:
        print(f"epoch {epoch + 1} loss {epoch_loss / len(loader):.4f} temperature {1 / model.logit_scale.exp().item():.4f}")

model.eval()
with torch.no_grad():
    img_emb = F.normalize(model.image_enc(images), dim=-1)
    txt_emb = F.normalize(model.text_enc(texts), dim=-1)
    sims = img_emb @ txt_emb.T
    for k in (1, 5):
        topk = sims.topk(k, dim=1).indices
        hit = (labels[topk] == labels[:, None]).any(dim=1).float().mean().item()
        print(f"recall@{k} (same class) {hit:.3f}")
    class_txt = F.normalize(model.text_enc(text_protos), dim=-1)
    zero_shot = (img_emb @ class_txt.T).argmax(dim=1)
    print(f"zero-shot accuracy {(zero_shot == labels).float().mean().item():.3f}")
    print(f"loss with smoothing 0 vs 0.1 on a batch: {F.cross_entropy(sims[:8, :8] * 10, torch.arange(8)).item():.4f} "
          f"{F.cross_entropy(sims[:8, :8] * 10, torch.arange(8), label_smoothing=0.1).item():.4f}")
