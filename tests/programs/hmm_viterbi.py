# A hidden Markov model in log space: the forward algorithm with torch.logsumexp, parameters as unconstrained
# logits through log_softmax trained by maximum likelihood with Adam, Viterbi decoding with max/argmax and a
# backtrace, and posterior state marginals from forward-backward.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
K, V, T = 3, 4, 20
true_trans = torch.tensor([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
true_emit = torch.tensor([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]])


def sample(n, T):
    seqs, states = [], []
    for _ in range(n):
        s = torch.multinomial(torch.ones(K) / K, 1).item()
        zs, xs = [], []
        for _ in range(T):
            zs.append(s)
            xs.append(torch.multinomial(true_emit[s], 1).item())
            s = torch.multinomial(true_trans[s], 1).item()
        seqs.append(xs)
        states.append(zs)
    return torch.tensor(seqs), torch.tensor(states)


def forward_log(log_pi, log_A, log_B, obs):
    alpha = log_pi + log_B[:, obs[:, 0]].T  # (n, K)
    alphas = [alpha]
    for t in range(1, obs.shape[1]):
        alpha = torch.logsumexp(alpha.unsqueeze(2) + log_A.unsqueeze(0), dim=1) + log_B[:, obs[:, t]].T
        alphas.append(alpha)
    return torch.stack(alphas, dim=1), torch.logsumexp(alpha, dim=-1)


def backward_log(log_A, log_B, obs):
    n, T = obs.shape
    beta = torch.zeros(n, K)
    betas = [beta]
    for t in range(T - 1, 0, -1):
        beta = torch.logsumexp(log_A.unsqueeze(0) + (log_B[:, obs[:, t]].T + beta).unsqueeze(1), dim=2)
        betas.append(beta)
    return torch.stack(betas[::-1], dim=1)


def viterbi(log_pi, log_A, log_B, seq):
    delta = log_pi + log_B[:, seq[0]]
    back = []
    for t in range(1, len(seq)):
        scores = delta.unsqueeze(1) + log_A
        best, arg = scores.max(dim=0)
        back.append(arg)
        delta = best + log_B[:, seq[t]]
    path = [delta.argmax().item()]
    for arg in reversed(back):
        path.append(arg[path[-1]].item())
    return path[::-1], delta.max().item()


obs, states = sample(16, T)
pi_logits = torch.zeros(K, requires_grad=True)
A_logits = (torch.eye(K) * 2.0).requires_grad_()
B_logits = torch.randn(K, V).mul(0.1).requires_grad_()
opt = torch.optim.Adam([pi_logits, A_logits, B_logits], lr=0.05)
for step in range(60):
    log_pi, log_A, log_B = (F.log_softmax(p, dim=-1) for p in (pi_logits, A_logits, B_logits))
    _, loglik = forward_log(log_pi, log_A, log_B, obs)
    loss = -loglik.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(f"step {step + 1}: nll per sequence {loss.item():.4f}")

with torch.no_grad():
    log_pi, log_A, log_B = (F.log_softmax(p, dim=-1) for p in (pi_logits, A_logits, B_logits))
    print("learned transitions:\n", log_A.exp())
    path, score = viterbi(log_pi, log_A, log_B, obs[0].tolist())
    print("viterbi path:", "".join(map(str, path)), f"score {score:.4f}")
    alphas, loglik = forward_log(log_pi, log_A, log_B, obs[:2])
    betas = backward_log(log_A, log_B, obs[:2])
    posterior = (alphas + betas - loglik[:, None, None]).exp()
    print(f"posterior rows sum to one: {torch.allclose(posterior.sum(-1), torch.ones(2, T), atol=1e-5)}")
    print("most likely states:", posterior[0].argmax(-1).tolist())
