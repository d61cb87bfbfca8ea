# A text classifier with a packed bidirectional LSTM: pad_sequence, pack_padded_sequence(enforce_sorted=False),
# the final hidden states of both directions, and a batch of padded token ids with padding_idx.
# (No inter-layer dropout: torch draws that mask inside its C++ LSTM, where the harness cannot share the stream.)
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
sentences = [torch.randint(1, 20, (int(n),)) for n in torch.randint(2, 7, (12,))]
labels = torch.randint(0, 2, (12,))


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dim, num_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(hidden_dim * 2, num_classes)

    def forward(self, text, lengths):
        embedded = self.embedding(text)
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_output, (hidden, cell) = self.lstm(packed)
        output, output_lengths = pad_packed_sequence(packed_output, batch_first=True)
        hidden = torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)
        return self.fc(hidden), output, output_lengths


model = LSTMClassifier(20, 8, 6, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for epoch in range(3):
    model.train()
    for start in range(0, 12, 4):
        batch = sentences[start:start + 4]
        lengths = torch.tensor([len(s) for s in batch])
        text = pad_sequence(batch, batch_first=True, padding_value=0)
        optimizer.zero_grad()
        logits, output, out_lengths = model(text, lengths)
        loss = criterion(logits, labels[start:start + 4])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f} output {tuple(output.shape)} lengths {out_lengths.tolist()}")
model.eval()
with torch.no_grad():
    lengths = torch.tensor([len(s) for s in sentences[:3]])
    logits, _, _ = model(pad_sequence(sentences[:3], batch_first=True), lengths)
    print(logits.softmax(-1))
