"""The textbook SIR epidemic model, written as course notes write it (lists of
compartments grown by append), differentiated as written: the sensitivity of the
epidemic's peak to the infection and recovery rates, taped and checkpointed.

    python examples/sir_model.py [--days 120] [--snapshots 6]

Prints the peak and its gradient, checks the checkpointed gradient against the
taped one and both against central finite differences, and prints one `check:`
line.
"""

import argparse

import numpy as np

import tangent_ckpt as tc


def sir_peak(beta, gamma, s0, i0, days):
    """The largest share of the population infected at once."""
    S = [s0]
    I = [i0]
    R = [0.0]
    for d in range(days):
        s, i, r = S[-1], I[-1], R[-1]
        new_inf = beta * s * i
        new_rec = gamma * i
        S.append(s - new_inf)
        I.append(i + new_inf - new_rec)
        R.append(r + new_rec)
    return np.max(np.array(I))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--snapshots", type=int, default=6)
    args = parser.parse_args(argv)
    point = (0.3, 0.1, 0.99, 0.01, args.days)
    taped = tc.grad(sir_peak, wrt=(0, 1))(*point)
    checkpointed = tc.grad(sir_peak, wrt=(0, 1), checkpoint=True,
                           snapshots=args.snapshots)(*point)
    eps = 1e-6
    fd = [(sir_peak(*[p + eps * (k == j) for k, p in enumerate(point[:4])], args.days) -
           sir_peak(*[p - eps * (k == j) for k, p in enumerate(point[:4])], args.days))
          / (2 * eps) for j in (0, 1)]
    print(f"peak infected share over {args.days} days: {sir_peak(*point):.6f}")
    print(f"d peak / d beta = {taped[0]:.6f}, d peak / d gamma = {taped[1]:.6f}")
    same = np.allclose(checkpointed, taped, rtol=1e-12, atol=1e-15)
    close = np.allclose(taped, fd, rtol=1e-6, atol=1e-9)
    print(f"check: {'OK' if same and close else 'FAILED'} (checkpointed = taped: {same}, "
          f"taped = finite differences: {close})")


if __name__ == "__main__":
    main()
