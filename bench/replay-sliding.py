#!/usr/bin/env python3
"""Replays the words in a sliding puzzle's antipodes.txt, independently of
cayley's engine: a letter names the direction a tile slides (the blank
moves the other way). Exits non-zero unless every word ends at the solved
grid (1, 2, ..., n-1 and the blank last).
Usage: bench/replay-sliding.py ROWS COLS antipodes.txt"""
import sys
if len(sys.argv) != 4:
    sys.exit(__doc__)
R, C = int(sys.argv[1]), int(sys.argv[2])
lines = open(sys.argv[3]).read().splitlines()
solved = [str(i) for i in range(1, R * C)] + ["."]
step = {"U": (1, 0), "D": (-1, 0), "L": (0, 1), "R": (0, -1)}
bad = total = 0
for k, line in enumerate(lines):
    if not line.startswith("#"):
        continue
    cells = [x for row in lines[k + 1:k + 1 + R] for x in row.split()]
    word = lines[k + 1 + R].split()[1:]
    blank = cells.index(".")
    for m in word:
        r, c = divmod(blank, C)
        r, c = r + step[m][0], c + step[m][1]
        if not (0 <= r < R and 0 <= c < C):
            break
        j = r * C + c
        cells[blank], cells[j] = cells[j], "."
        blank = j
    total += 1
    ok = cells == solved
    bad += not ok
    print(f"{len(word)} moves -> {'solved' if ok else 'NOT solved'}")
print(f"{total} antipodes, {total - bad} solved by their words")
sys.exit(1 if bad or not total else 0)
