"""``python -m tests.benchmarks.simulate_boosting``: the boosting attack (Blum & Hardt 2015) against each
public-board mode (a measurement script: in tests/benchmarks, not in the shipped ``stats`` package).

Prints, per mode, how far the attacker's boosted public accuracy rises above chance (0.5), in points and in
standard errors of a public score (``sqrt(0.25 / n)``), and its accuracy on fresh items (what it really
learnt: nothing). The figures are recorded in docs/comparisons.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from stats.ladder import Mode, boosting_attack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.simulate_boosting", description=__doc__)
    parser.add_argument("--items", type=int, default=4000, help="public items n (default 4,000)")
    parser.add_argument("--submissions", type=int, default=400, help="attacker's submissions k (default 400)")
    parser.add_argument("--repeats", type=int, default=50, help="independent runs per mode (default 50)")
    parser.add_argument(
        "--eta",
        type=float,
        nargs="+",
        default=[0.01, 0.03],
        help="steps of the fixed Ladder (default 0.01 0.03)",
    )
    parser.add_argument(
        "--z",
        type=float,
        nargs="+",
        default=[1.0, 3.0],
        help="steps of the parameter-free Ladder in paired standard errors (default 1 3)",
    )
    parser.add_argument("--precision", type=int, default=5, help="decimals of the plain board (default 5)")
    parser.add_argument("--seed", type=int, default=20150216)
    args = parser.parse_args(argv)
    n, k = args.items, args.submissions
    se = np.sqrt(0.25 / n)
    print(f"boosting attack: n = {n} public items, k = {k} submissions, {args.repeats} runs per mode")
    print(f"one standard error of a public accuracy near 0.5: {se:.5f}")
    print(
        f"{'mode':<20} {'vote on public':>15} {'in SE':>7} {'shown - 0.5':>12} {'in SE':>7} "
        f"{'fresh - 0.5':>12} {'kept':>6}"
    )
    settings: list[tuple[str, Mode, float, float]] = [("plain", "plain", 0.0, 1.0)]
    settings += [(f"ladder eta={eta:g}", "ladder", eta, 1.0) for eta in args.eta]
    settings += [(f"ladder-free z={z:g}", "ladder-free", 0.01, z) for z in args.z]
    for i, (label, mode, eta, z) in enumerate(settings):
        rng = np.random.default_rng(np.random.SeedSequence([args.seed, i]))
        start = time.perf_counter()
        runs = [
            boosting_attack(n, k, mode=mode, rng=rng, eta=eta, precision=args.precision, z=z)
            for _ in range(args.repeats)
        ]
        gain = np.mean([r.public_accuracy - 0.5 for r in runs])
        shown = np.mean([r.shown - 0.5 for r in runs])
        fresh = np.mean([r.fresh_accuracy - 0.5 for r in runs])
        kept = np.mean([r.selected for r in runs])
        print(
            f"{label:<20} {gain:>+15.4f} {gain / se:>7.2f} {shown:>+12.4f} {shown / se:>7.2f} "
            f"{fresh:>+12.4f} {kept:>6.1f}   ({time.perf_counter() - start:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
