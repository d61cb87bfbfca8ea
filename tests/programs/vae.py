# A VAE: reparameterization with randn_like, BCE reconstruction + KL divergence, Adam, sampling.
import torch
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 12)
        self.fc21 = nn.Linear(12, 2)
        self.fc22 = nn.Linear(12, 2)
        self.fc3 = nn.Linear(2, 12)
        self.fc4 = nn.Linear(12, 16)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 16))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


torch.manual_seed(1)
model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-2)
data = torch.rand(5, 10, 4, 4)
for epoch in range(1, 4):
    model.train()
    train_loss = 0
    for batch in data:
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(batch)
        loss = loss_function(recon_batch, batch, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print(f"====> Epoch: {epoch} Average loss: {train_loss / 50:.4f}")
with torch.no_grad():
    sample = torch.randn(3, 2)
    print(model.decode(sample).view(3, 4, 4)[0])
