"""Three NumPy models written as a user would write them, each with and without
checkpointing (``tc.checkpoint``, ``tc.checkpoint_scope``, a checkpointed loop).

Used by tests/test_models.py (same parameters after SGD to 1e-12) and
benchmarks/models.py (tracemalloc peak of one gradient, with and without).
"""

import numpy as np

import tangent_ckpt as tc


# --- a residual MLP: one checkpoint per block --------------------------------------
def res_block(x, W, b):
    h = np.tanh(x @ W + b)
    return x + h * 0.5


def mlp_loss(x, Ws, bs, y):
    for l in range(Ws.shape[0]):
        x = res_block(x, Ws[l], bs[l])
    return np.mean((x - y) ** 2)


def mlp_loss_ckpt(x, Ws, bs, y):
    for l in range(Ws.shape[0]):
        x = tc.checkpoint(res_block, x, Ws[l], bs[l])
    return np.mean((x - y) ** 2)


def mlp_params(rng, d=32, layers=8):
    return [rng.standard_normal((layers, d, d)) / np.sqrt(d), np.zeros((layers, d))]


# --- a single-head attention block: the attention matrix in a checkpoint scope -----
def softmax(s):
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(x, Wq, Wk, Wv, Wo):
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    a = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return x + (a @ v) @ Wo


def attn_loss(x, Wq, Wk, Wv, Wo, y):
    h = attention(x, Wq, Wk, Wv, Wo)
    h = attention(h, Wq, Wk, Wv, Wo)
    return np.mean((h - y) ** 2)


def attn_loss_ckpt(x, Wq, Wk, Wv, Wo, y):
    with tc.checkpoint_scope("attention1"):
        h = attention(x, Wq, Wk, Wv, Wo)
    with tc.checkpoint_scope("attention2"):
        h = attention(h, Wq, Wk, Wv, Wo)
    return np.mean((h - y) ** 2)


def attn_params(rng, d=32):
    return [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4)]


# --- an LSTM over a sequence: the time loop checkpointed -------------------------
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_cell(x, h, c, Wx, Wh, b):
    z = x @ Wx + h @ Wh + b
    n = h.shape[-1]
    i = sigmoid(z[:, :n])
    f = sigmoid(z[:, n:2 * n])
    o = sigmoid(z[:, 2 * n:3 * n])
    g = np.tanh(z[:, 3 * n:])
    c = f * c + i * g
    h = o * np.tanh(c)
    return h, c


def lstm_loss(xs, Wx, Wh, b, Wy, y):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    c = np.zeros((xs.shape[1], Wh.shape[0]))
    for x in xs:
        h, c = lstm_cell(x, h, c, Wx, Wh, b)
    return np.mean((h @ Wy - y) ** 2)


def lstm_params(rng, d_in=8, d=32, d_out=4):
    return [rng.standard_normal((d_in, 4 * d)) / np.sqrt(d_in),
            rng.standard_normal((d, 4 * d)) / np.sqrt(d), np.zeros(4 * d),
            rng.standard_normal((d, d_out)) / np.sqrt(d)]


# --- the three problems: (loss, checkpointed loss, data, params, wrt, grad options) ---
def problems(rng, size=1):
    """Each: name, plain loss, checkpointed loss, inputs before the params, params,
    inputs after the params, and the grad() options of the checkpointed version."""
    batch = 16 * size
    d = 32 * size
    mlp = ("residual MLP", mlp_loss, mlp_loss_ckpt, [rng.standard_normal((8 * batch, d))],
           mlp_params(rng, d, layers=8 * size), [rng.standard_normal((8 * batch, d))], {})
    attn = ("attention block", attn_loss, attn_loss_ckpt, [rng.standard_normal((4 * batch, d))],
            attn_params(rng, d), [rng.standard_normal((4 * batch, d))], {})
    lstm = ("LSTM", lstm_loss, lstm_loss, [rng.standard_normal((50 * size, batch, 8))],
            lstm_params(rng, 8, d, 4), [rng.standard_normal((batch, 4))],
            dict(checkpoint=True, snapshots=4))
    return [mlp, attn, lstm]


def gradient(loss, before, params, after, **options):
    wrt = tuple(range(len(before), len(before) + len(params)))
    return tc.grad(loss, wrt=wrt, **options)


def sgd(loss, before, params, after, steps=3, lr=0.1, **options):
    """A few SGD steps; returns the final parameters."""
    df = gradient(loss, before, params, after, **options)
    params = [p.copy() for p in params]
    for _ in range(steps):
        grads = df(*before, *params, *after)
        params = [p - lr * g for p, g in zip(params, grads)]
    return params
