"""Small PyTorch programs using torch.distributions run unchanged with ember (``import ember
as torch``): a REINFORCE step with Categorical, a VAE-style loss with Normal.rsample and
kl_divergence, and a Gaussian-mixture fit by maximum likelihood."""

import numpy as np
import pytest

import ember
import ember.distributions  # noqa: F401  (binds ember.distributions, as torch.distributions)

torch_ref = pytest.importorskip("torch")


def _reinforce(torch, seed_weights):
    Categorical = torch.distributions.Categorical
    net = torch.nn.Linear(4, 3)
    with torch.no_grad():
        net.weight.copy_(torch.tensor(seed_weights[0]))
        net.bias.copy_(torch.tensor(seed_weights[1]))
    states = torch.tensor(np.linspace(-1, 1, 20).reshape(5, 4))
    actions = torch.tensor([0, 2, 1, 1, 0])
    rewards = torch.tensor([1.0, -0.5, 0.3, 2.0, -1.0])
    dist = Categorical(logits=net(states.float()))
    loss = -(dist.log_prob(actions) * rewards).mean() - 0.01 * dist.entropy().mean()
    loss.backward()
    return loss.item(), net.weight.grad.numpy().copy()


def test_reinforce_step_matches_torch():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32))
    le, ge = _reinforce(ember, w)
    lt, gt = _reinforce(torch_ref, w)
    np.testing.assert_allclose(le, lt, rtol=1e-5)
    np.testing.assert_allclose(ge, gt, rtol=1e-4, atol=1e-6)


def _vae_loss(torch, eps):
    Normal, kl_divergence = torch.distributions.Normal, torch.distributions.kl_divergence
    mu = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    log_sigma = torch.tensor([[-0.1, 0.2], [0.0, -0.3]], requires_grad=True)
    q = Normal(mu, log_sigma.exp())
    z = q.loc + q.scale * torch.tensor(eps)  # the rsample path with fixed noise
    recon = ((z - 1.0) ** 2).sum()
    kl = kl_divergence(q, Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum()
    (recon + kl).backward()
    return (recon + kl).item(), mu.grad.numpy().copy(), log_sigma.grad.numpy().copy()


def test_vae_loss_matches_torch():
    eps = np.array([[0.3, -1.2], [0.7, 0.1]], dtype=np.float32)
    for a, b in zip(_vae_loss(ember, eps), _vae_loss(torch_ref, eps)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gaussian_mixture_fit_by_maximum_likelihood():
    import ember as torch
    from ember.distributions import Categorical, MixtureSameFamily, Normal

    torch.manual_seed(0)
    data = torch.cat([torch.randn(400) * 0.5 - 2.0, torch.randn(600) * 0.5 + 2.0])
    logits = torch.zeros(2, requires_grad=True)
    locs = torch.tensor([-0.5, 0.5], requires_grad=True)
    log_scales = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam([logits, locs, log_scales], lr=0.1)
    for _ in range(150):
        opt.zero_grad()
        gmm = MixtureSameFamily(Categorical(logits=logits), Normal(locs, log_scales.exp()))
        loss = -gmm.log_prob(data).mean()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(np.sort(locs.detach().numpy()), [-2.0, 2.0], atol=0.15)
    np.testing.assert_allclose(log_scales.exp().detach().numpy(), [0.5, 0.5], atol=0.1)
    weights = torch.softmax(logits, 0).detach().numpy()
    np.testing.assert_allclose(np.sort(weights), [0.4, 0.6], atol=0.05)
