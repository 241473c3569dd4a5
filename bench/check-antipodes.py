#!/usr/bin/env python3
"""Checks a finished Loopover table's result files outside cayley's engine.

Usage: bench/check-antipodes.py RESULT_DIR ROWS COLS
  RESULT_DIR holds result.json and antipodes.txt of `cayley run
  loopover:ROWSxCOLS ... --antipodes N` with N at least the number of
  antipode classes (so that every class is listed).
Checks, with the board's symmetries built here from scratch (translations,
mirrors, and the transpose of a square board; a state is conjugated as
new[s(x)] = s(old[x]), pieces named by their home cell):
  - the depth counts sum to the group order, and the table is complete;
  - the listed classes' sizes (the "class of N" lines) add up to the last
    depth's count, and the board's symmetries take the listed states to
    exactly that many states (so every class is listed, and nothing else);
  - that set of states is closed under inversion (d(g) = d(g^-1)).
Exits non-zero on any failure. The words are replayed separately by
bench/replay-antipodes.py."""
import json, re, sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
out, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = rows * cols
result = json.load(open(f"{out}/result.json"))
text = open(f"{out}/antipodes.txt").read()
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


depths = [int(c) for c in result["depths"]]
order = int(result["group_order"])
check(sum(depths) == order, f"depth counts sum to the group order {order}")
check(bool(result["complete"]), "the table is complete")
check(result["diameter"] in (None, len(depths) - 1), f"diameter {result['diameter']} is the last depth")


def cell(r, c):
    return (r % rows) * cols + (c % cols)


# Board symmetries as permutations of the cells 0..n-1.
symmetries = set()
flips = [(False, False), (True, False), (False, True), (True, True)]
for dr in range(rows):
    for dc in range(cols):
        for fr, fc in flips:
            for transpose in ([False, True] if rows == cols else [False]):
                perm = []
                for x in range(n):
                    r, c = divmod(x, cols)
                    r, c = (rows - 1 - r if fr else r), (cols - 1 - c if fc else c)
                    if transpose:
                        r, c = c, r
                    perm.append(cell(r + dr, c + dc))
                symmetries.add(tuple(perm))
symmetries = list(symmetries)
print(f"{len(symmetries)} board symmetries")


def conjugate(state, s):
    new = [0] * n
    for x in range(n):
        new[s[x]] = s[state[x]]
    return tuple(new)


def inverse(state):
    inv = [0] * n
    for x, piece in enumerate(state):
        inv[piece] = x
    return tuple(inv)


blocks = [b for b in text.split("\n\n") if "solve:" in b or re.search(r"^\d", b, re.M)]
listed, claimed = [], []
for b in blocks:
    m = re.search(r"class of (\d+)", b)
    grid = [int(x) - 1 for l in b.splitlines() if re.match(r"^\s*\d", l) for x in l.split()]
    if len(grid) != n:
        continue
    listed.append(tuple(grid))
    claimed.append(int(m.group(1)) if m else 1)
print(f"{len(listed)} antipode classes listed")
union, sizes_ok = set(), True
for state, size in zip(listed, claimed):
    orbit = {conjugate(state, s) for s in symmetries}
    # cayley may reduce by a subgroup of the board's symmetries (its class
    # is then an orbit of that subgroup, whose size divides this one).
    sizes_ok &= len(orbit) % size == 0
    union |= orbit
check(len(set(listed)) == len(listed), "the listed states are distinct")
check(sum(claimed) == depths[-1], f"their classes add up to the last depth's {depths[-1]} states")
check(sizes_ok, "each class's size divides its orbit under the board's symmetries")
check(len(union) == depths[-1], f"the board's symmetries take them to {len(union)} states, all the last depth")
check(all(inverse(s) in union for s in union), "the antipodes are closed under inversion")
sys.exit(1 if failures else 0)
