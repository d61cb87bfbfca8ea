# Custom autograd Functions beyond the basics: @once_differentiable backward, ctx.needs_input_grad to skip
# work, non-tensor arguments (None gradients for them), mark_non_differentiable for an index output,
# ctx.set_materialize_grads(False), a Function used inside an nn.Module, and torch.autograd.grad on it.
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class ScaledSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.beta = beta
        ctx.threshold = threshold
        bx = beta * x
        return torch.where(bx > threshold, x, torch.log1p(torch.exp(bx)) / beta)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        bx = ctx.beta * x
        grad = torch.where(bx > ctx.threshold, torch.ones_like(x), torch.sigmoid(bx))
        return grad_out * grad, None, None


class MaxWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.max(dim=1)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        (idx,) = ctx.saved_tensors
        grad = torch.zeros(ctx.shape, dtype=grad_values.dtype)
        grad.scatter_(1, idx.unsqueeze(1), grad_values.unsqueeze(1))
        return grad


class LinearFn(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        ctx.set_materialize_grads(False)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_w = grad_b = None
        if grad_out is None:
            return None, None, None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out @ weight
        if ctx.needs_input_grad[1]:
            grad_w = grad_out.t() @ x
        if ctx.needs_input_grad[2]:
            grad_b = grad_out.sum(0)
        return grad_x, grad_w, grad_b


class MyLinear(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(o, i) * 0.3)
        self.bias = nn.Parameter(torch.zeros(o))

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


torch.manual_seed(0)
x = torch.randn(5, 4, requires_grad=True)
y = ScaledSoftplus.apply(x, 2.0, 1.0)
y.sum().backward()
ref = torch.randn(5, 4).copy_(x.detach()).requires_grad_()
torch.nn.functional.softplus(ref, beta=2.0, threshold=1.0).sum().backward()
print("softplus", torch.allclose(x.grad, ref.grad, atol=1e-6), f"{y.sum().item():.5f}")
g = torch.autograd.grad(ScaledSoftplus.apply(x, 2.0, 1.0).sum(), x, create_graph=True)[0]
try:
    g.sum().backward()
    print("double backward ran")
except RuntimeError as e:
    print("double backward refused:", type(e).__name__, "grad requires grad:", g.requires_grad)

v, idx = MaxWithIndex.apply(x)
print("idx requires grad:", idx.requires_grad, "values grad_fn:", v.grad_fn is not None, idx.tolist())
x.grad = None
(v * torch.arange(5.0)).sum().backward()
print("max grad", x.grad)

model = nn.Sequential(MyLinear(4, 8), nn.Tanh(), MyLinear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
target = x.detach().sum(1, keepdim=True)
for step in range(5):
    loss = ((model(x.detach()) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
frozen = torch.randn(3, 4)
w = torch.randn(2, 4, requires_grad=True)
out = LinearFn.apply(frozen, w, torch.zeros(2))
print("only weight needs grad:", torch.autograd.grad(out.sum(), w)[0].shape)
