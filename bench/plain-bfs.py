#!/usr/bin/env python3
"""Plain hash-set BFS, written separately from cayley's engine, to check the
first depths of a table: prints the states at each depth 0..D.
Usage: bench/plain-bfs.py loopover R C stm|mtm D
       bench/plain-bfs.py sliding R C D      (blank starting in a corner)"""
import sys


def bfs(start, neighbours, depth):
    seen, frontier, counts = {start}, [start], [1]
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for t in neighbours(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
        counts.append(len(nxt))
    return counts


def loopover(R, C, metric):
    n, moves = R * C, []
    for r in range(R):
        for k in (range(1, C) if metric == "mtm" else sorted({1, C - 1})):
            p = list(range(n))
            for c in range(C):
                p[r * C + (c + k) % C] = r * C + c
            moves.append(p)
    for c in range(C):
        for k in (range(1, R) if metric == "mtm" else sorted({1, R - 1})):
            p = list(range(n))
            for r in range(R):
                p[((r + k) % R) * C + c] = r * C + c
            moves.append(p)
    return tuple(range(n)), lambda s: (tuple(s[i] for i in p) for p in moves)


def sliding(R, C):
    n, adjacent = R * C, []
    for i in range(n):
        r, c = divmod(i, C)
        adjacent.append([j for j, ok in ((i - C, r > 0), (i + C, r < R - 1), (i - 1, c > 0), (i + 1, c < C - 1)) if ok])

    def neighbours(s):
        b = s.index(0)
        for j in adjacent[b]:
            t = list(s)
            t[b], t[j] = t[j], 0
            yield tuple(t)
    return tuple(list(range(1, n)) + [0]), neighbours


args = sys.argv[1:]
if len(args) == 5 and args[0] == "loopover":
    start, step = loopover(int(args[1]), int(args[2]), args[3])
elif len(args) == 4 and args[0] == "sliding":
    start, step = sliding(int(args[1]), int(args[2]))
else:
    sys.exit(__doc__)
print(" ".join(map(str, bfs(start, step, int(args[-1])))))
