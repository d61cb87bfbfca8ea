# Gradient descent by hand: requires_grad leaves, in-place updates under no_grad, grad.zero_().
import torch

torch.manual_seed(0)
x = torch.linspace(-1, 1, 50)
y = 3 * x ** 3 - x + 0.5
a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
d = torch.randn((), requires_grad=True)
learning_rate = 0.05
for t in range(200):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 40 == 39:
        print(t, f"{loss.item():.5f}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad / 50
        b -= learning_rate * b.grad / 50
        c -= learning_rate * c.grad / 50
        d -= learning_rate * d.grad / 50
        a.grad = None
        b.grad.zero_()
        c.grad.zero_()
        d.grad.zero_()
print(f"Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3")
