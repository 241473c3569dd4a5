#!/usr/bin/env python3
"""Plain hash-set BFS, written separately from cayley's engine, to check the
first depths of a table: prints the states at each depth 0..D.
Usage: bench/plain-bfs.py loopover R C stm|mtm D
       bench/plain-bfs.py sliding R C D      (blank starting in a corner)
       bench/plain-bfs.py tws FILE SET D     (one set of a twsearch .tws file,
                                              every power of each move, as
                                              twsearch's half-turn metric)
       bench/plain-bfs.py tws-qtm FILE SET D (each move and its inverse
                                              only: cayley's --metric stm)
       bench/plain-bfs.py perm FILE D        (a perm: file's generators in
                                              1-based cycles, and their
                                              inverses, as `perm:` adds)"""
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


def tws(path, name, quarter=False):
    """One set of a .tws file: states are (pieces, twists); a move takes
    the piece and twist of slot p[i] to slot i, adding its own twist."""
    modulus, solved, moves, block, move = None, None, [], None, None
    lines = [l.split("#")[0].split() for l in open(path)]
    for i, words in enumerate(lines):
        if words[:1] == ["Set"] and words[1] == name:
            modulus = int(words[3]) if len(words) > 3 else 1
        elif words[:1] in (["Solved"], ["Move"]):
            block, move = words[0], (words[1] if len(words) > 1 else None)
        elif block and words == [name]:
            perm = [int(x) - 1 for x in lines[i + 1]]
            twist = [int(x) for x in lines[i + 2]] if len(lines[i + 2]) == len(perm) else [0] * len(perm)
            if block == "Solved":
                solved = (tuple(perm), tuple(twist))
            else:
                moves.append((perm, twist))
    assert modulus and solved and moves, "no set " + name

    def apply(s, m):
        return (tuple(s[0][j] for j in m[0]),
                tuple((s[1][j] + t) % modulus for j, t in zip(m[0], m[1])))
    # Every power of each move other than the identity: U, U2, U'; or
    # only the first and the last (U, U') for quarter turns.
    generators = []
    for m in moves:
        ident = (tuple(range(len(m[0]))), (0,) * len(m[0]))
        powers, power = [], apply(ident, m)
        while power != ident:
            powers.append((list(power[0]), list(power[1])))
            power = apply(power, m)
        generators += [powers[0], powers[-1]] if quarter and len(powers) > 1 else powers
    return solved, lambda s: (apply(s, m) for m in generators)


def perm(path):
    """Lines `NAME: (a,b,...)(...)`: the content of slot a goes to slot b."""
    import re
    gens = []
    for line in open(path):
        line = line.split("#")[0]
        if ":" not in line or "(" not in line:
            continue
        gens.append([[int(x) - 1 for x in c.split(",")] for c in re.findall(r"\(([\d,]+)\)", line)])
    n = max(x for g in gens for c in g for x in c) + 1
    moves = []
    for g in gens:
        for cycles in (g, [c[::-1] for c in g]):
            image = list(range(n))
            for c in cycles:
                for i, x in enumerate(c):
                    image[x] = c[(i + 1) % len(c)]
            if image not in moves:
                moves.append(image)
    # A state lists each piece's slot; a move sends the piece in slot x to image[x].
    return tuple(range(n)), lambda s: (tuple(m[x] for x in s) for m in moves)


args = sys.argv[1:]
if len(args) == 4 and args[0] in ("tws", "tws-qtm"):
    start, step = tws(args[1], args[2], args[0] == "tws-qtm")
elif len(args) == 5 and args[0] == "loopover":
    start, step = loopover(int(args[1]), int(args[2]), args[3])
elif len(args) == 3 and args[0] == "perm":
    start, step = perm(args[1])
elif len(args) == 4 and args[0] == "sliding":
    start, step = sliding(int(args[1]), int(args[2]))
else:
    sys.exit(__doc__)
print(" ".join(map(str, bfs(start, step, int(args[-1])))))
