# Fine-tuning with a frozen backbone: requires_grad_(False) on the pretrained part, an optimizer over the
# trainable parameters only, ReduceLROnPlateau on the validation loss, and the best state kept with deepcopy.
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
                         nn.Flatten())
head = nn.Linear(16, 3)
model = nn.Sequential(backbone, head)
for param in backbone.parameters():
    param.requires_grad = False
backbone.eval()
trainable = [p for p in model.parameters() if p.requires_grad]
print("trainable params:", sum(p.numel() for p in trainable), "frozen:",
      sum(p.numel() for p in model.parameters() if not p.requires_grad))
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.5, momentum=0.9)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)
x_train, y_train = torch.randn(16, 1, 6, 6), torch.randint(0, 3, (16,))
x_val, y_val = torch.randn(8, 1, 6, 6), torch.randint(0, 3, (8,))
criterion = nn.CrossEntropyLoss()
best_loss, best_state = float("inf"), None
for epoch in range(8):
    head.train()
    optimizer.zero_grad()
    loss = criterion(model(x_train), y_train)
    loss.backward()
    optimizer.step()
    head.eval()
    with torch.no_grad():
        val_loss = criterion(model(x_val), y_val)
    scheduler.step(val_loss)
    if val_loss < best_loss:
        best_loss, best_state = val_loss.item(), copy.deepcopy(model.state_dict())
    print(f"epoch {epoch}: train {loss.item():.4f} val {val_loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.4f}")
model.load_state_dict(best_state)
print(f"best val {best_loss:.4f}", backbone[0].weight.grad is None, backbone[1].running_mean.abs().sum().item() == 0)
