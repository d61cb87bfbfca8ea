# Time-series forecasting with nn.LSTMCell unrolled by hand (the "sine wave" example): two stacked cells,
# future steps fed back, and LBFGS replaced by Adam with MSE.
import math
import torch
import torch.nn as nn


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 12)
        self.lstm2 = nn.LSTMCell(12, 12)
        self.linear = nn.Linear(12, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 12, dtype=torch.float32)
        c_t = torch.zeros(input.size(0), 12, dtype=torch.float32)
        h_t2 = torch.zeros(input.size(0), 12, dtype=torch.float32)
        c_t2 = torch.zeros(input.size(0), 12, dtype=torch.float32)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


torch.manual_seed(0)
t = torch.arange(0, 21, dtype=torch.float32)
shift = torch.randint(-4, 4, (6, 1)).float()
data = torch.sin((t + shift) / 3.0)
input, target = data[:, :-1], data[:, 1:]
seq = Sequence()
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(seq.parameters(), lr=0.02)
for i in range(5):
    optimizer.zero_grad()
    out = seq(input)
    loss = criterion(out, target)
    loss.backward()
    optimizer.step()
    print("step", i, "loss:", f"{loss.item():.5f}")
with torch.no_grad():
    pred = seq(input[:2], future=4)
    print("test loss:", f"{criterion(pred[:, :-4], target[:2]).item():.5f}", [f"{v:.3f}" for v in pred[0, -4:].tolist()])
print(math.isfinite(loss.item()))
