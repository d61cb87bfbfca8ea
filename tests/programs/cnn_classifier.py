# A LeNet-style CNN on CIFAR-shaped random data, Adam, a StepLR schedule and f"{loss:.4f}" logging.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 8, 3)
        self.fc1 = nn.Linear(8 * 2 * 2, 24)
        self.fc2 = nn.Linear(24, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


torch.manual_seed(0)
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(net.parameters(), lr=0.01)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
inputs_all = torch.randn(4, 8, 3, 14, 14)
labels_all = torch.randint(0, 10, (4, 8))
for epoch in range(4):
    running_loss = 0.0
    for i, (inputs, labels) in enumerate(zip(inputs_all, labels_all)):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    scheduler.step()
    print(f"[{epoch + 1}] loss: {running_loss / 4:.4f} lr: {scheduler.get_last_lr()[0]:.5f}")

correct = 0
total = 0
with torch.no_grad():
    outputs = net(inputs_all[0])
    _, predicted = torch.max(outputs.data, 1)
    total += labels_all[0].size(0)
    correct += (predicted == labels_all[0]).sum().item()
print(f"Accuracy: {100 * correct // total} %")
