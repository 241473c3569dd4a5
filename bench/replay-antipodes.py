#!/usr/bin/env python3
"""Replays the words in a run's antipodes.txt, independently of cayley's engine.

Usage: bench/replay-antipodes.py INFO.txt antipodes.txt
  INFO.txt: the output of `cayley info PUZZLE` (its generator cycles).
A cycle (..., a, b, ...) moves the piece in slot a to slot b; slots are
numbered as info says ("cycles on slots numbered from 0" for the S_N
families, from 1 otherwise). Prints each
word's length and exits non-zero unless every antipode ends solved.
For puzzles whose solved grid reads 1, 2, ..., n or 0, 1, ..., n-1
(Loopover, Turnstyle, permutations, the S_N families); not for sliding
puzzles (their blank is '.')."""
import re, sys
if len(sys.argv) != 3:
    sys.exit(__doc__)
info, anti = open(sys.argv[1]).read(), open(sys.argv[2]).read()
first = re.search(r"numbered from (\d+)", info)
first = int(first.group(1)) if first else 1
gens = {}
for m in re.finditer(r"^\s+(\S+)\s+((?:\([\d,]+\))+)\s*$", info, re.M):
    cycles = [list(map(int, c.split(','))) for c in re.findall(r"\(([\d,]+)\)", m.group(2))]
    gens[m.group(1)] = cycles


def apply(state, cycles):
    s = list(state)
    for c in cycles:
        for i, a in enumerate(c):
            s[c[(i + 1) % len(c)] - first] = state[a - first]  # slot a's piece moves on
    return s


blocks = [b for b in anti.split("\n\n") if "solve:" in b]
ok = {True: 0, False: 0}
for b in blocks:
    lines = [l for l in b.splitlines() if not l.startswith("#")]
    grid = [int(x) for l in lines if not l.startswith("solve") for x in l.split()]
    word = [l for l in lines if l.startswith("solve")][0].split()[1:]
    s = grid
    for w in word:
        s = apply(s, gens[w])
    solved = s == sorted(grid)
    ok[solved] += 1
    print(len(word), "moves:", " ".join(word), "->", "solved" if solved else "NOT solved")
print(f"{len(blocks)} antipodes, {ok[True]} solved by their words ({len(gens)} generators)")
sys.exit(0 if blocks and ok[False] == 0 else 1)
