#!/usr/bin/env python3
"""Replays every antipode word of a finished cayley run of a twsearch .tws
puzzle, outside the engine: parses the .tws moves of the sets the states
show, applies each word to its state (a move takes the piece and twist of
slot p[i] to slot i, adding its own twist; X2 and X' are X applied twice
and three times, as in twsearch), and checks that every word solves its
state and has the table's last depth as its length.
Usage: bench/replay-tws.py FILE.tws RESULT_DIR SET [SET...]
  SET: the sets the run kept, in the file's order (e.g. EDGES for
  --nocorners --nocenters); the states list their slots in that order."""
import json
import sys


def moves_of(path, sets):
    lines = [l.split("#")[0].split() for l in open(path)]
    modulus, moves, current = {}, {}, None
    for i, words in enumerate(lines):
        if words[:1] == ["Set"]:
            modulus[words[1]] = int(words[3]) if len(words) > 3 else 1
        elif words[:1] == ["Move"]:
            current = moves.setdefault(words[1], {})
        elif words[:1] == ["Solved"] or words[:1] == ["End"]:
            current = None if words[:1] == ["Solved"] else current
        elif current is not None and len(words) == 1 and words[0] in modulus:
            perm = [int(x) - 1 for x in lines[i + 1]]
            twist = lines[i + 2]
            twist = [int(x) for x in twist] if len(twist) == len(perm) else [0] * len(perm)
            current[words[0]] = (perm, twist)
    mods = []
    for s in sets:
        n = next(len(m[s][0]) for m in moves.values() if s in m)
        mods += [modulus[s]] * n
    base = {}
    for name, by_set in moves.items():
        perm, twist, offset = [], [], 0
        for s in sets:
            n = next(len(m[s][0]) for m in moves.values() if s in m)
            p, t = by_set.get(s, (list(range(n)), [0] * n))
            perm += [offset + j for j in p]
            twist += t
            offset += n
        base[name] = (perm, twist)
    return base, mods


def apply(state, move, mods):
    pieces, twists = state
    perm, twist = move
    return ([pieces[j] for j in perm],
            [(twists[j] - t) % mods[i] for i, (j, t) in enumerate(zip(perm, twist))])


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    base, mods = moves_of(sys.argv[1], sys.argv[3:])
    result = json.load(open(sys.argv[2] + "/result.json"))
    depth = len(result["depths"]) - 1
    solved = (list(range(len(mods))), [0] * len(mods))
    for a in result["antipodes"]:
        pieces, twists = [], []
        for cell in a["state"]:
            p, _, t = cell.partition("+")
            pieces.append(int(p) - 1)
            twists.append(int(t or 0))
        state = (pieces, twists)
        word = a["word"].split()
        for m in word:
            name, times = (m[:-1], 2) if m.endswith("2") else (m[:-1], 3) if m.endswith("'") else (m, 1)
            for _ in range(times):
                state = apply(state, base[name], mods)
        assert state == solved, f"{a['word']} does not solve {a['state']}"
        assert len(word) == depth, f"{a['word']} is not {depth} moves"
    print(f"{len(result['antipodes'])} antipode words replayed: each solves its state in {depth} moves")


main()
