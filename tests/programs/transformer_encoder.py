# A Transformer encoder text classifier as the tutorials write it: token embeddings with a sinusoidal
# positional encoding buffer, nn.TransformerEncoder (batch_first, pre-norm, gelu) over padded batches with
# src_key_padding_mask, masked mean pooling, AdamW with gradient clipping and a warmup LambdaLR; then a
# causal language-model head trained with Transformer.generate_square_subsequent_mask and greedy decoding.
# The attention dropout is 0: torch applies it inside its fused attention kernel, whose random draws the
# harness cannot share between the two runs (the embedding dropout is an ordinary nn.Dropout).
import math

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
vocab_size, d_model, pad_idx = 12, 16, 0


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class TextClassifier(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
        self.pos = PositionalEncoding(d_model)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=32, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, tokens):
        padding = tokens == pad_idx
        x = self.drop(self.pos(self.embed(tokens) * math.sqrt(d_model)))
        x = self.encoder(x, src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).float()
        pooled = (x * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


# label: does the sequence contain token 3 more often than token 4?
sequences, labels = [], []
for i in range(24):
    length = int(torch.randint(3, 9, (1,)))
    seq = torch.randint(1, vocab_size, (length,))
    sequences.append(seq)
    labels.append(int((seq == 3).sum() > (seq == 4).sum()))
tokens = pad_sequence(sequences, batch_first=True, padding_value=pad_idx)
targets = torch.tensor(labels)
print("batch", tuple(tokens.shape), "positives", targets.sum().item())

model = TextClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 5))
criterion = nn.CrossEntropyLoss()
for epoch in range(6):
    model.train()
    for start in range(0, len(tokens), 8):
        logits = model(tokens[start:start + 8])
        loss = criterion(logits, targets[start:start + 8])
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    logits = model(tokens)
    accuracy = (logits.argmax(-1) == targets).float().mean()
print(f"train accuracy {accuracy:.3f}")
print("logits", logits[:3])


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, 2, 32, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, 1, norm=nn.LayerNorm(d_model), enable_nested_tensor=False)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        x = self.pos(self.embed(idx)).transpose(0, 1)  # (T, B, C): the default sequence-first layout
        mask = nn.Transformer.generate_square_subsequent_mask(idx.size(1))
        x = self.encoder(x, mask=mask, is_causal=True)
        return self.lm_head(x.transpose(0, 1))


text = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] * 4 + [1])
x, y = text[:-1].view(4, 11), text[1:].view(4, 11)
lm = TinyLM()
opt = torch.optim.Adam(lm.parameters(), lr=1e-2)
for step in range(15):
    logits = lm(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"lm step {step} loss {loss.item():.4f}")

lm.eval()
idx = torch.tensor([[1, 2]])
with torch.no_grad():
    for _ in range(6):
        next_id = lm(idx)[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, next_id], dim=1)
print("generated", idx.tolist())
