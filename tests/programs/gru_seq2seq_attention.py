# Seq2seq with a GRU encoder and an attention GRU decoder (the translation tutorial's shape), teacher forcing,
# NLLLoss over log_softmax, and greedy decoding with topk.
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS, EOS, MAX_LEN, V, H = 0, 1, 6, 10, 12


class EncoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, H)
        self.gru = nn.GRU(H, H, batch_first=True)

    def forward(self, input):
        return self.gru(self.embedding(input))


class BahdanauAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.Wa, self.Ua, self.Va = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, H)
        self.attention = BahdanauAttention()
        self.gru = nn.GRU(2 * H, H, batch_first=True)
        self.out = nn.Linear(H, V)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LEN):
            embedded = self.embedding(decoder_input)
            query = decoder_hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            output, decoder_hidden = self.gru(torch.cat((embedded, context), dim=2), decoder_hidden)
            decoder_outputs.append(self.out(output))
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                _, topi = decoder_outputs[-1].topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)


torch.manual_seed(0)
src = torch.randint(2, V, (4, 5))
tgt = torch.flip(src, dims=[1])
tgt = torch.cat([tgt, torch.full((4, 1), EOS)], dim=1)
encoder, decoder = EncoderRNN(), AttnDecoderRNN()
enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(4):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    encoder_outputs, encoder_hidden = encoder(src)
    decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, tgt)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1))
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
with torch.no_grad():
    encoder_outputs, encoder_hidden = encoder(src[:1])
    decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden)
    print(decoder_outputs.argmax(-1).tolist(), attn.shape)
