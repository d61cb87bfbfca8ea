# An LSTM encoder-decoder with teacher forcing and Bahdanau-style attention written with bmm,
# pack_padded_sequence for variable-length sources, masked softmax, and a gradient clip by value.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

V_SRC, V_TGT, E, H = 15, 12, 8, 16
PAD = 0


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V_SRC, E, padding_idx=PAD)
        self.lstm = nn.LSTM(E, H, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * H, H)

    def forward(self, src, lengths):
        packed = pack_padded_sequence(self.emb(src), lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        h = torch.tanh(self.bridge(torch.cat([h[-2], h[-1]], dim=-1)))
        return out, (h.unsqueeze(0), torch.zeros_like(h).unsqueeze(0))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V_TGT, E)
        self.lstm = nn.LSTM(E + 2 * H, H, batch_first=True)
        self.attn_q = nn.Linear(H, 2 * H, bias=False)
        self.out = nn.Linear(H + 2 * H, V_TGT)

    def forward(self, tok, state, enc_out, src_mask):
        q = self.attn_q(state[0][-1]).unsqueeze(2)                    # B, 2H, 1
        scores = torch.bmm(enc_out, q).squeeze(2)                      # B, S
        scores = scores.masked_fill(~src_mask, -1e9)
        attn = F.softmax(scores, dim=-1)
        ctx = torch.bmm(attn.unsqueeze(1), enc_out)                    # B, 1, 2H
        x = torch.cat([self.emb(tok).unsqueeze(1), ctx], dim=-1)
        y, state = self.lstm(x, state)
        return self.out(torch.cat([y.squeeze(1), ctx.squeeze(1)], dim=-1)), state, attn


enc, dec = Encoder(), Decoder()
params = list(enc.parameters()) + list(dec.parameters())
opt = torch.optim.Adam(params, lr=5e-3)
src = torch.randint(1, V_SRC, (4, 7))
lengths = torch.tensor([7, 5, 3, 6])
for i, n in enumerate(lengths.tolist()):
    src[i, n:] = PAD
src_mask = src != PAD
tgt = torch.randint(1, V_TGT, (4, 5))

for epoch in range(5):
    enc_out, state = enc(src, lengths)
    tok = torch.zeros(4, dtype=torch.long)
    loss = 0.0
    for t in range(tgt.size(1)):
        logits, state, attn = dec(tok, state, enc_out, src_mask)
        loss = loss + F.cross_entropy(logits, tgt[:, t])
        tok = tgt[:, t]                                                # teacher forcing
    loss = loss / tgt.size(1)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(params, 0.5)
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f} attn-on-pad {attn[~src_mask].sum().item():.2e}")
print("enc_out", tuple(enc_out.shape), "attn rows sum", [round(v, 4) for v in attn.sum(-1).tolist()])
