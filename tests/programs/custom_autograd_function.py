# A custom autograd Function (ctx.save_for_backward, a straight-through estimator) inside a model.
import torch


class ClampedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, lo, hi):
        ctx.save_for_backward(input)
        ctx.lo, ctx.hi = lo, hi
        return input.clamp(lo, hi).round()

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        mask = (input >= ctx.lo) & (input <= ctx.hi)
        return grad_output * mask, None, None


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


torch.manual_seed(0)
w1 = torch.randn(6, 8, requires_grad=True)
w2 = torch.randn(8, 1, requires_grad=True)
x = torch.randn(20, 6)
y = torch.randn(20, 1)
for t in range(5):
    h = MyReLU.apply(x @ w1)
    q = ClampedSTE.apply(h * 2, -3.0, 3.0) / 2
    loss = ((q @ w2 - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w1 -= 0.05 * w1.grad
        w2 -= 0.05 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
    print(t, round(loss.item(), 4))
print(torch.autograd.gradcheck(MyReLU.apply, (torch.randn(4, dtype=torch.double, requires_grad=True),)))
