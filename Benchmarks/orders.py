"""The order in which make bench launches its kinds, round after round.

A launch is slowed or sped by the one just before it (its exit still being cleaned up by the X
server, the bus and the kernel; the caches it left warm). A rotation of one list (round r starts r
places on) gives every kind every place in the round but still the same kind before it, every
round: measured on 2026-11-29, the signed-out window took 60.8 ms after the plain C window and
49.9 ms after the signed-in front (medians of 10 launches each), and the rotation always put it after
the plain C window. Williams' design (a balanced Latin square) gives each kind, within the rounds,
each other kind before it equally often: n rounds for an even number of kinds, 2n for an odd one.
A round's first launch follows the last of the round before, which the design does not balance:
10 of the 50 launches of make bench's 10 counted rounds of 5 kinds. A number of rounds that
is not a whole number of designs leaves the rounds themselves unbalanced: warn_if_partial says so.

python3 Benchmarks/orders.py checks the design (scripts/lint.sh runs it).
"""

import collections
import sys


def balanced_rounds(n):
    """Rounds of range(n), each a permutation, in which every ordered pair (a, b) of distinct
    items has a right before b equally often."""
    first = [0]
    for j in range(1, n):
        # 0, 1, n-1, 2, n-2, …: the steps between neighbours are 1, -2, 3, -4, …, each difference once.
        first.append((j + 1) // 2 if j % 2 else n - j // 2)
    rounds = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rounds += [list(reversed(row)) for row in rounds]
    return rounds


def order(kinds, round_):
    """The kinds in round round_'s order. With the warm-up round 0 left out of the figures, the
    rounds 1…len(design) still use every round of the design once."""
    design = balanced_rounds(len(kinds))
    return [kinds[i] for i in design[round_ % len(design)]]


def predecessors(rounds):
    """How often each ordered pair (before, after) occurs within the rounds."""
    return collections.Counter((a, b) for row in rounds for a, b in zip(row, row[1:]))


def warn_if_partial(kinds, pairs):
    """A warning on stderr when `pairs` counted rounds (round 0 is the warm-up) are not whole designs."""
    rounds = len(balanced_rounds(kinds))
    if pairs % rounds:
        print(f"bench: {pairs} pairs of {kinds} kinds are not whole rounds of the balanced order "
              f"(a multiple of {rounds}): what runs before each launch is not balanced", file=sys.stderr)


def check():
    """Raises (not assert: python -O would drop it) unless the design is what the module says."""
    for n in range(1, 10):
        rounds = balanced_rounds(n)
        if any(sorted(row) != list(range(n)) for row in rounds):
            raise AssertionError(f"a round of {n} kinds is not a permutation")
        pairs = predecessors(rounds)
        wanted = {(a, b) for a in range(n) for b in range(n) if a != b}
        if set(pairs) != wanted or len(set(pairs.values())) > 1:
            raise AssertionError(f"{n} kinds: the pairs within the rounds are not balanced: {sorted(pairs.items())}")
        # The rounds make bench counts (1 to len(design); 0 is the warm-up) are the whole design.
        if sorted(map(tuple, (order(range(n), r) for r in range(1, len(rounds) + 1)))) != sorted(map(tuple, rounds)):
            raise AssertionError(f"{n} kinds: the counted rounds do not use every round of the design once")
    # What the design replaced: a rotation keeps each kind's predecessor, and the check above sees it.
    rotation = [[(x + i) % 5 for x in range(5)] for i in range(5)]
    if set(predecessors(rotation)) == {(a, b) for a in range(5) for b in range(5) if a != b}:
        raise AssertionError("the check cannot tell a rotation from a balanced design")


if __name__ == "__main__":
    check()
    print("orders: within the rounds, every kind follows every other equally often, for 1 to 9 kinds")
