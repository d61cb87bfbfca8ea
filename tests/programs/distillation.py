# Knowledge distillation: a frozen teacher in eval mode, temperature-scaled KLDivLoss on log_softmax,
# mixed with cross-entropy on the labels.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 5))
teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
kl = nn.KLDivLoss(reduction="batchmean")
T, alpha = 4.0, 0.7
for step in range(5):
    x = torch.randn(16, 12)
    y = torch.randint(0, 5, (16,))
    with torch.no_grad():
        teacher_logits = teacher(x)
    student_logits = student(x)
    soft = kl(F.log_softmax(student_logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1)) * T * T
    hard = F.cross_entropy(student_logits, y)
    loss = alpha * soft + (1 - alpha) * hard
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    agree = (student_logits.argmax(1) == teacher_logits.argmax(1)).float().mean()
    print(f"step {step} soft {soft.item():.4f} hard {hard.item():.4f} agreement {agree:.2f}")
print(all(p.grad is None for p in teacher.parameters()))
