# The full nn.Transformer (encoder and decoder, batch_first) on a sequence-reversal task: source and target
# embeddings with a learned positional nn.Embedding, tgt_mask from nn.Transformer.generate_square_subsequent_mask,
# src/tgt key padding masks for variable lengths, memory_key_padding_mask, CrossEntropyLoss(ignore_index=PAD,
# label_smoothing), a (scaled-down) Noam-style warmup with LambdaLR, gradient clipping, and greedy decoding in eval mode.
import torch
import torch.nn as nn

torch.manual_seed(0)
PAD, BOS, EOS, V, D = 0, 1, 2, 10, 32


def batch(n, max_len=6):
    lengths = torch.randint(3, max_len + 1, (n,))
    src = torch.full((n, max_len), PAD)
    tgt = torch.full((n, max_len + 2), PAD)
    for i, L in enumerate(lengths.tolist()):
        seq = torch.randint(3, V, (L,))
        src[i, :L] = seq
        tgt[i, : L + 2] = torch.cat([torch.tensor([BOS]), seq.flip(0), torch.tensor([EOS])])
    return src, tgt


class Reverser(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D, padding_idx=PAD)
        self.pos = nn.Embedding(16, D)
        self.transformer = nn.Transformer(d_model=D, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=64, dropout=0.0, batch_first=True)
        self.out = nn.Linear(D, V)

    def embed(self, x):
        return self.tok(x) * D**0.5 + self.pos(torch.arange(x.shape[1]))

    def forward(self, src, tgt_in):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])
        h = self.transformer(self.embed(src), self.embed(tgt_in), tgt_mask=tgt_mask,
                             src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                             memory_key_padding_mask=src == PAD)
        return self.out(h)


model = Reverser()
crit = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.05)
opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98))
warmup = 20
# the Noam schedule scaled down, and a short run: at its peak of 0.04 float32 rounding grew 100x in a step, and
# even at a tenth of it the two runs (as two torch runs on different hardware) part after ~50 steps: the key
# projection's bias has a gradient of pure rounding noise (attention is invariant to it), which Adam normalises
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 * D**-0.5 * min((s + 1) ** -0.5, (s + 1) * warmup**-1.5))
print("mask", nn.Transformer.generate_square_subsequent_mask(3).tolist())
for step in range(45):
    model.train()
    src, tgt = batch(32)
    logits = model(src, tgt[:, :-1])
    loss = crit(logits.reshape(-1, V), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 15 == 14:
        print(f"step {step + 1} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")


@torch.no_grad()
def greedy(src, max_len=8):
    model.eval()
    ys = torch.full((src.shape[0], 1), BOS)
    for _ in range(max_len):
        nxt = model(src, ys)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], dim=1)
    return ys


src, tgt = batch(16)
pred = greedy(src)
n = tgt.shape[1]
match = ((pred[:, :n] == tgt) | (tgt == PAD)).all(dim=1).float().mean()
tok_acc = ((pred[:, 1:n] == tgt[:, 1:]) & (tgt[:, 1:] != PAD)).sum() / (tgt[:, 1:] != PAD).sum()
print(f"exact reversals {match:.3f} token accuracy {tok_acc:.3f}")
print("example", src[0].tolist(), "->", pred[0].tolist())
