# Feature extraction with forward hooks, gradients captured by tensor hooks (Grad-CAM style), a forward
# pre-hook that rescales the input, and handles removed afterwards.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Conv2d(3, 2, 3), nn.Flatten(), nn.Linear(2 * 2 * 2, 4))
activations, gradients = {}, {}


def save_activation(name):
    def hook(module, input, output):
        activations[name] = output.detach()
        output.register_hook(lambda grad: gradients.__setitem__(name, grad))
    return hook


handles = [model[0].register_forward_hook(save_activation("conv1")),
           model[2].register_forward_hook(save_activation("conv2")),
           model.register_forward_pre_hook(lambda module, args: (args[0] * 2,))]
x = torch.randn(1, 1, 6, 6)
out = model(x)
out[0, out.argmax()].backward()
weights = gradients["conv2"].mean(dim=(2, 3), keepdim=True)
cam = torch.relu((weights * activations["conv2"]).sum(1))
print({k: tuple(v.shape) for k, v in activations.items()}, cam)
for h in handles:
    h.remove()
print(torch.allclose(model(x) * 1, model(x)), len(activations))
