# Speech-enhancement style denoising with a spectral mask: torch.stft(return_complex=True) with a Hann window,
# magnitude and phase via abs()/angle(), a log-magnitude input to a small MLP predicting a sigmoid mask per
# time-frequency bin, the mask applied to the complex spectrogram and torch.istft back to a waveform
# (length=...), an SNR metric in dB, and torch.polar rebuilding the spectrum from magnitude and phase.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
n_fft, hop, length = 64, 16, 512
window = torch.hann_window(n_fft)
t = torch.arange(length) / 8000.0


def batch(n):
    f = 200 + 600 * torch.rand(n, 1)
    clean = torch.sin(2 * math.pi * f * t) * (0.5 + 0.5 * torch.rand(n, 1))
    noisy = clean + 0.3 * torch.randn(n, length)
    return clean, noisy


def spec(x):
    return torch.stft(x, n_fft, hop_length=hop, window=window, return_complex=True)


def snr_db(ref, est):
    return (10 * torch.log10(ref.pow(2).sum(-1) / (ref - est).pow(2).sum(-1))).mean()


bins = n_fft // 2 + 1
model = nn.Sequential(nn.Linear(bins, 64), nn.ReLU(), nn.Linear(64, bins), nn.Sigmoid())
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
clean, noisy = batch(4)
S = spec(noisy)
print("spectrogram", tuple(S.shape), S.dtype, f"frames {S.shape[-1]}")
for step in range(60):
    clean, noisy = batch(16)
    S = spec(noisy)
    feats = torch.log1p(S.abs()).transpose(1, 2)  # (batch, frames, bins)
    mask = model(feats).transpose(1, 2)
    est = torch.istft(S * mask, n_fft, hop_length=hop, window=window, length=length)
    loss = nn.functional.l1_loss(est, clean) + nn.functional.mse_loss(mask * S.abs(), spec(clean).abs())
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(f"step {step + 1} loss {loss.item():.4f}")

with torch.no_grad():
    clean, noisy = batch(8)
    S = spec(noisy)
    mask = model(torch.log1p(S.abs()).transpose(1, 2)).transpose(1, 2)
    est = torch.istft(S * mask, n_fft, hop_length=hop, window=window, length=length)
    print(f"SNR noisy {snr_db(clean, noisy):.2f} dB -> enhanced {snr_db(clean, est):.2f} dB")
    rebuilt = torch.polar(S.abs(), S.angle())
    back = torch.istft(rebuilt, n_fft, hop_length=hop, window=window, length=length)
    print(f"round trip error {(back - noisy).abs().max():.2e} mask mean {mask.mean():.4f}")
