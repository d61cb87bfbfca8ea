# Neural style transfer the tutorial's way: a fixed random conv "feature extractor" in eval mode with
# requires_grad_(False), content and style losses as nn.Modules inserted into a new nn.Sequential, Gram
# matrices from view + mm, and the input image itself optimised with LBFGS and a closure with clamp_.
import torch
import torch.nn as nn
import torch.nn.functional as F


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


torch.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1)).eval().requires_grad_(False)
content_img = torch.rand(1, 3, 12, 12)
style_img = torch.rand(1, 3, 12, 12)
cnn(content_img)   # the extractor's weights are fixed from here on

model = nn.Sequential()
content_losses, style_losses = [], []
i = 0
for layer in cnn.children():
    if isinstance(layer, nn.Conv2d):
        i += 1
        name = f"conv_{i}"
    elif isinstance(layer, nn.ReLU):
        name = f"relu_{i}"
        layer = nn.ReLU(inplace=False)
    else:
        name = f"pool_{i}"
    model.add_module(name, layer)
    if name == "conv_2":
        target = model(content_img).detach()
        cl = ContentLoss(target)
        model.add_module(f"content_loss_{i}", cl)
        content_losses.append(cl)
    if name in ("conv_1", "conv_2", "conv_3"):
        target_feature = model(style_img).detach()
        sl = StyleLoss(target_feature)
        model.add_module(f"style_loss_{i}", sl)
        style_losses.append(sl)
print([name for name, _ in model.named_children()])

input_img = content_img.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([input_img])
run = [0]
while run[0] <= 15:
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = 1e4 * sum(sl.loss for sl in style_losses)
        content_score = sum(cl.loss for cl in content_losses)
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        if run[0] % 5 == 0:
            print(f"run {run[0]}: style {style_score.item():.5f} content {content_score.item():.5f}")
        return style_score + content_score
    optimizer.step(closure)
with torch.no_grad():
    input_img.clamp_(0, 1)
print("pixel mean", round(input_img.mean().item(), 4))
