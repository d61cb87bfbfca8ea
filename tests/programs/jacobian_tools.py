# Autograd tools a researcher reaches for: torch.autograd.functional.jacobian/hessian/vjp/jvp/hvp,
# torch.func.grad and vmap for per-sample gradients, retain_graph, grad of grad, and backward hooks.
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp
from torch.func import grad, vmap, functional_call

torch.manual_seed(0)


def f(x):
    return torch.stack([x[0] ** 2 * x[1], x[1].sin() + x[2], (x * x).sum()])


x = torch.randn(3)
J = jacobian(f, x)
print("jacobian", J.shape, J.sum().item())
H = hessian(lambda v: (v ** 3).sum() + v[0] * v[1], x)
print("hessian diag", H.diagonal().tolist())
_, vj = vjp(f, x, torch.ones(3))
_, jv = jvp(f, x, torch.ones(3))
print("vjp", vj.tolist(), "jvp", jv.tolist())
_, hv = hvp(lambda v: (v.exp() * v).sum(), x, torch.ones(3))
print("hvp", hv.tolist())
model = torch.nn.Linear(3, 1)
X = torch.randn(5, 3)
Y = torch.randn(5, 1)
full_grad = torch.autograd.grad(((model(X) - Y) ** 2).mean(), model.weight)[0]
params = {k: v.detach() for k, v in model.named_parameters()}


def loss_fn(p, xb, yb):
    out = functional_call(model, p, (xb.unsqueeze(0),))
    return ((out - yb) ** 2).mean()


per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, X, Y)
print("per-sample grads", {k: tuple(v.shape) for k, v in per_sample.items()})
print("mean matches", torch.allclose(per_sample["weight"].mean(0), full_grad, atol=1e-6))
w = torch.tensor(2.0, requires_grad=True)
y = w ** 4
g1, = torch.autograd.grad(y, w, create_graph=True)
g2, = torch.autograd.grad(g1, w)
print("d/dw", g1.item(), "d2/dw2", g2.item())
seen = []
h = w.register_hook(lambda g: seen.append(g.item()) or g * 2)
z = (w * 3) ** 2
z.backward(retain_graph=True)
z.backward()
h.remove()
print("hook saw", seen, "grad", w.grad.item())
