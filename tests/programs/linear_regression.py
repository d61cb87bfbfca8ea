# Linear regression with nn.Linear, MSELoss and SGD; the learned weights are printed at the end.
import torch
import torch.nn as nn

torch.manual_seed(42)
x = torch.randn(100, 3)
true_w = torch.tensor([[2.0], [-3.0], [0.5]])
y = x @ true_w + 1.0 + 0.1 * torch.randn(100, 1)

model = nn.Linear(3, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(30):
    optimizer.zero_grad()
    outputs = model(x)
    loss = criterion(outputs, y)
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 5 == 0:
        print(f"Epoch [{epoch+1}/30], Loss: {loss.item():.4f}")

w, b = model.weight.data, model.bias.data
print("weights:", [round(v, 3) for v in w.squeeze().tolist()], "bias:", round(b.item(), 3))
with torch.no_grad():
    print(model(torch.tensor([[1.0, 1.0, 1.0]])))
