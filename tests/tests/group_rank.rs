//! The group ranking of coded puzzles (shared/src/space/codec/group.rs):
//! exactly as many ranks as reachable states, a bijection onto them, and
//! depth tables equal to plain breadth-first searches written here from
//! the rules (stickers of the cube's geometry, or twsearch's move
//! convention), on corner-only, edge-only, skewb-like and pyraminx-like
//! definitions where the class digits and twists rank 3–1000× more; and
//! the tail ranking (shared/src/space/codec/tail.rs) of a definition with few
//! twists and of a plain permutation group (M11) far smaller than its `n!`.

use cayley_shared::space::Space;
use cayley_tests::cube::{cube_sticker_generators, cube_tws};
use cayley_tests::run::{assert_words_solve, run_complete, Finished};
use cayley_tests::{bfs_counts, reference_bfs, test_dir};
use std::collections::HashSet;

/// twsearch's skewb (samples/main/skewb.tws, MIT), moves DFR and UBR only.
const SKEWB_LIKE: &str = "Name Skewb2\nSet CORNER 4 3\nSet CORNER2 4 3\nSet CENTER 6 1\n\
    Solved\nCORNER\n1 2 3 4\n0 0 0 0\nCORNER2\n1 2 3 4\n0 0 0 0\nCENTER\n1 2 3 4 5 6\n0 0 0 0 0 0\nEnd\n\
    Move DFR\nCORNER\n1 2 3 4\n0 0 1 0\nCORNER2\n4 1 3 2\n2 2 0 2\nCENTER\n3 1 2 4 5 6\n0 0 0 0 0 0\nEnd\n\
    Move UBR\nCORNER\n1 2 3 4\n0 1 0 0\nCORNER2\n2 3 1 4\n2 2 2 0\nCENTER\n1 5 3 2 4 6\n0 0 0 0 0 0\nEnd\n";

/// twsearch's pyraminx (samples/main/pyraminx.tws, MIT), moves L and R.
const PYRAMINX_LIKE: &str = "Name Pyraminx2\nSet CORNER 4 3\nSet CORNER2 4 3\nSet EDGE 6 2\n\
    Solved\nCORNER\n1 2 3 4\n0 0 0 0\nCORNER2\n1 2 3 4\n0 0 0 0\nEDGE\n1 2 3 4 5 6\n0 0 0 0 0 0\nEnd\n\
    Move L\nCORNER\n2 4 3 1\n1 2 0 0\nCORNER2\n2 4 3 1\n1 2 0 0\nEDGE\n2 4 3 1 5 6\n0 1 0 1 0 0\nEnd\n\
    Move R\nCORNER\n3 1 2 4\n2 0 1 0\nCORNER2\n3 1 2 4\n2 0 1 0\nEDGE\n1 5 3 4 6 2\n0 0 0 0 0 0\nEnd\n";

/// Made up so that blocks are cosets of the chain's tail: six plain
/// pieces under a 6-cycle and a transposition, each move also swapping the
/// two 3-twisting pieces of `T` (so `A`'s parity is `T`'s, and the class
/// digits rank twice the group), and twisting them keeping their sum (so
/// the twist lattice is at most 3 twists).
const TAIL_LIKE: &str = "Name Tail\nSet A 6 1\nSet T 2 3\n\
    Solved\nA\n1 2 3 4 5 6\n0 0 0 0 0 0\nT\n1 2\n0 0\nEnd\n\
    Move X\nA\n2 3 4 5 6 1\n0 0 0 0 0 0\nT\n2 1\n1 2\nEnd\n\
    Move Y\nA\n2 1 3 4 5 6\n0 0 0 0 0 0\nT\n2 1\n0 0\nEnd\n";

/// Made up so that pieces are identical (`A`'s first two) and the group is
/// far smaller than the class digits' ranks: `A` and `B` move in lockstep
/// (`B`'s distinct pieces then say where `A`'s are), and `T` twists and
/// swaps with them.
const IDENTICAL_LIKE: &str = "Name Identical\nSet A 4 1\nSet B 4 1\nSet T 2 3\n\
    Solved\nA\n1 1 2 3\n0 0 0 0\nB\n1 2 3 4\n0 0 0 0\nT\n1 2\n0 0\nEnd\n\
    Move X\nA\n2 3 4 1\n0 0 0 0\nB\n2 3 4 1\n0 0 0 0\nT\n1 2\n1 2\nEnd\n\
    Move Y\nA\n2 1 3 4\n0 0 0 0\nB\n2 1 3 4\n0 0 0 0\nT\n2 1\n0 0\nEnd\n";

/// Made up like twsearch's `puzzlerchallenger` (identical pieces, no
/// orientation, two orbits): the 210 arrangements of `E` are the low part,
/// the 20 of `C` the blocks (`space/codec/arrangement.rs`).
const ARRANGEMENT_LIKE: &str = "Name Arrangement\nSet C 6 1\nSet E 7 1\n\
    Solved\nC\n1 1 1 2 2 2\n0 0 0 0 0 0\nE\n1 1 2 2 3 3 3\n0 0 0 0 0 0 0\nEnd\n\
    Move R\nC\n2 3 4 5 6 1\n0 0 0 0 0 0\nE\n2 3 4 5 6 7 1\n0 0 0 0 0 0 0\nEnd\n\
    Move L\nC\n1 3 4 5 6 2\n0 0 0 0 0 0\nE\n1 2 4 5 6 7 3\n0 0 0 0 0 0 0\nEnd\n";

/// An orbit of more arrangements than a twist low part may take (E:
/// 8!/(2!·2!) = 10,080 > 8,192), as turnstile's edges, and a tail too large
/// for the group ranking: C has no distinct piece and moves alone (S6).
const LARGE_ARRANGEMENT_LIKE: &str = "Name LargeArrangement\nSet C 6 1\nSet E 8 1\n\
    Solved\nC\n1 1 1 2 2 2\n0 0 0 0 0 0\nE\n1 1 2 2 3 4 5 6\n0 0 0 0 0 0 0 0\nEnd\n\
    Move A\nC\n2 3 4 5 6 1\n0 0 0 0 0 0\nE\n1 2 3 4 5 6 7 8\n0 0 0 0 0 0 0 0\nEnd\n\
    Move B\nC\n2 1 3 4 5 6\n0 0 0 0 0 0\nE\n1 2 3 4 5 6 7 8\n0 0 0 0 0 0 0 0\nEnd\n\
    Move R\nC\n1 2 3 4 5 6\n0 0 0 0 0 0\nE\n2 3 4 5 6 7 8 1\n0 0 0 0 0 0 0 0\nEnd\n\
    Move L\nC\n1 2 3 4 5 6\n0 0 0 0 0 0\nE\n1 3 4 5 6 7 8 2\n0 0 0 0 0 0 0 0\nEnd\n";

/// One set's part of a move: (perm, ori), as in the file (1-based perm).
type SetMove = (Vec<usize>, Vec<u8>);

/// A move: its part in each set (`None` = the set stays).
type TwsMove = Vec<Option<SetMove>>;

/// Depth counts by BFS from twsearch's rules alone: position `j` of a set
/// receives the piece of position `perm[j]`, whose orientation gains
/// `ori[perm[j]]` modulo the set's `k`; a set a move leaves out stays; every
/// power of a move is one move (the half-turn metric). `sets` lists each
/// set's size and `k`; `moves[m][set]` is `None` when the move leaves it;
/// `solved` is a (piece label, twist) pair per position, pieces with one
/// label being identical.
fn reference_tws_bfs(sets: &[(usize, u8)], moves: &[TwsMove], solved: Vec<u8>) -> Vec<u64> {
    let apply = |state: &[u8], mv: &[Option<SetMove>]| -> Vec<u8> {
        let mut out = state.to_vec();
        let mut offset = 0;
        for ((n, k), part) in sets.iter().zip(mv) {
            if let Some((perm, ori)) = part {
                for j in 0..*n {
                    let from = perm[j] - 1;
                    out[2 * (offset + j)] = state[2 * (offset + from)];
                    out[2 * (offset + j) + 1] = (state[2 * (offset + from) + 1] + ori[from]) % k;
                }
            }
            offset += n;
        }
        out
    };
    bfs_counts(solved, |state| {
        let mut out = Vec::new();
        for mv in moves {
            let mut s = apply(state, mv);
            while s != state {
                out.push(s.clone());
                s = apply(&s, mv);
            }
        }
        out
    })
}

/// Parses the sets, moves and solved state of a small `.tws` text (no
/// comments, no sequences), for [`reference_tws_bfs`].
fn sets_and_moves(text: &str) -> (Vec<(usize, u8)>, Vec<TwsMove>, Vec<u8>) {
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    let names: Vec<&str> = lines.iter().filter(|l| l[0] == "Set").map(|l| l[1]).collect();
    let sets: Vec<(usize, u8)> = lines
        .iter()
        .filter(|l| l[0] == "Set")
        .map(|l| (l[2].parse().unwrap(), l[3].parse().unwrap()))
        .collect();
    let offsets: Vec<usize> = sets
        .iter()
        .scan(0, |at, s| Some(std::mem::replace(at, *at + s.0)))
        .collect();
    let total: usize = sets.iter().map(|s| s.0).sum();
    let mut solved = vec![0u8; 2 * total];
    let mut moves = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i][0] == "Solved" {
            i += 1;
            while lines[i][0] != "End" {
                let set = names.iter().position(|&n| n == lines[i][0]).unwrap();
                for (j, (piece, twist)) in lines[i + 1].iter().zip(&lines[i + 2]).enumerate() {
                    let at = offsets[set] + j;
                    solved[2 * at] = (offsets[set] + piece.parse::<usize>().unwrap() - 1) as u8;
                    solved[2 * at + 1] = twist.parse().unwrap();
                }
                i += 3;
            }
        }
        if lines[i][0] == "Move" {
            let mut mv = vec![None; sets.len()];
            i += 1;
            while lines[i][0] != "End" {
                let set = names.iter().position(|&n| n == lines[i][0]).unwrap();
                let perm = lines[i + 1].iter().map(|x| x.parse().unwrap()).collect();
                let ori = lines[i + 2].iter().map(|x| x.parse().unwrap()).collect();
                mv[set] = Some((perm, ori));
                i += 3;
            }
            moves.push(mv);
        }
        i += 1;
    }
    (sets, moves, solved)
}

/// Runs `spec` and checks that it was group ranked with exactly
/// `reference`'s states, and that its table is `reference`.
fn assert_exact(spec: &str, reference: &[u64]) -> Finished {
    let run = run_complete(spec);
    let Space::Coded(codec) = &run.job.space else {
        panic!("group-ranked puzzles are coded")
    };
    assert!(codec.is_group_ranked(), "{spec}: group ranked");
    let reachable: u64 = reference.iter().sum();
    assert_eq!(codec.states(), reachable as u128, "{spec}: ranked = reachable");
    assert_eq!(
        run.job.reachable_states,
        Some(reachable as u128),
        "{spec}: known before searching"
    );
    assert_eq!(run.result.depths, reference, "{spec}");
    assert_words_solve(&run);
    run
}

/// Every rank decodes to a state reachable by the puzzle's moves (applied
/// here by the coded rules: the content of slot `s` goes to `perm[s]`
/// gaining `twist[s]`), and encodes back to it.
fn assert_bijection(run: &Finished) {
    let Space::Coded(codec) = &run.job.space else {
        panic!("coded")
    };
    let puzzle = &run.job.puzzle;
    let n = puzzle.slots;
    let modulus = &puzzle.coding.as_ref().unwrap().modulus;
    let mut reachable: HashSet<Vec<u8>> = [puzzle.solved.clone()].into();
    let mut queue = vec![puzzle.solved.clone()];
    while let Some(state) = queue.pop() {
        for m in &puzzle.moves {
            let mut next = state.clone();
            for s in 0..n {
                let t = m.perm.images()[s] as usize;
                next[t] = state[s];
                next[n + t] = (state[n + s] + m.twist.get(s).copied().unwrap_or(0)) % modulus[t];
            }
            if reachable.insert(next.clone()) {
                queue.push(next);
            }
        }
    }
    assert_eq!(codec.states(), reachable.len() as u128);
    let mut state = vec![0u8; 2 * n];
    for rank in 0..codec.states() as u64 {
        let (cells, twists) = state.split_at_mut(n);
        codec.unrank(rank, cells, twists);
        assert!(reachable.contains(&state), "rank {rank} decodes to a reachable state");
        assert_eq!(codec.rank(&state[..n], &state[n..]), rank);
    }
}

#[test]
fn corner_only_cube_ranks_its_group() {
    // <U, R> on the 2×2×2: 29,160 positions; 7!·3⁶ by class digits.
    let dir = test_dir();
    let path = dir.path().join("corners.tws");
    std::fs::write(&path, cube_tws(2, "UR")).unwrap();
    let reference = reference_bfs(&cube_sticker_generators(2, "UR", true));
    assert_eq!(reference.iter().sum::<u64>(), 29_160);
    // --no-symmetry: by default its 4 symmetries reduce it (tests/tests/oriented_reduced.rs).
    for k in [" --no-symmetry", " --shard-pieces 2"] {
        let run = assert_exact(&format!("tws:{}{k}", path.display()), &reference);
        assert_bijection(&run);
    }
}

#[test]
fn edge_only_cube_ranks_its_group() {
    // <U, F> on the 3×3×3's edges alone (corners left out): the edge
    // stickers of the geometry's turns (corners come first, 8·3 stickers).
    let dir = test_dir();
    let path = dir.path().join("edges.tws");
    std::fs::write(&path, cube_tws(3, "UF")).unwrap();
    let edges: Vec<Vec<u8>> = cube_sticker_generators(3, "UF", true)
        .iter()
        .map(|g| g[24..].iter().map(|&s| s - 24).collect())
        .collect();
    let reference = reference_bfs(&edges);
    let run = assert_exact(
        &format!("tws:{} --omit CORNERS --shard-pieces 1", path.display()),
        &reference,
    );
    assert_bijection(&run);
}

/// Runs a twsearch-style definition exactly, in each shard plan, against
/// the BFS from its rules.
fn assert_tws_exact(text: &str, shard_keys: &[&str]) -> Vec<Finished> {
    let dir = test_dir();
    let path = dir.path().join("def.tws");
    std::fs::write(&path, text).unwrap();
    let (sets, moves, solved) = sets_and_moves(text);
    let reference = reference_tws_bfs(&sets, &moves, solved);
    let runs: Vec<Finished> = shard_keys
        .iter()
        .map(|k| assert_exact(&format!("tws:{}{k}", path.display()), &reference))
        .collect();
    runs.iter().for_each(assert_bijection);
    runs
}

/// True when the run's blocks are cosets of the chain's tail (labels go
/// with a block and a move).
fn tail_ranked(run: &Finished) -> bool {
    let Space::Coded(codec) = &run.job.space else {
        panic!("coded")
    };
    codec.low().labels_per_move()
}

#[test]
fn skewb_like_ranks_its_group() {
    assert_tws_exact(SKEWB_LIKE, &["", " --shard-pieces 3"]);
}

#[test]
fn pyraminx_like_ranks_its_group() {
    // The tips (CORNER2) move with the axial pieces (CORNER): the class
    // digits rank both orbits' places independently, 12× too many.
    assert_tws_exact(PYRAMINX_LIKE, &["", " --shard-pieces 2"]);
}

#[test]
fn few_twists_rank_by_the_chain_tail() {
    for run in assert_tws_exact(TAIL_LIKE, &["", " --shard-pieces 1", " --shard-pieces 2"]) {
        assert!(tail_ranked(&run), "the tail ranking is the one under test");
        let Space::Coded(codec) = &run.job.space else {
            panic!("coded")
        };
        assert!(codec.shard_blocks() > 1, "several blocks, so moves change blocks");
        // The worker's budget counts the source-block tables: a source
        // block with its label packed in (4 bytes) per block and move,
        // every shard; and a bit per block for the occupied source blocks.
        let moves = run.job.puzzle.moves.len() as u64;
        let blocks = codec.shards() * codec.shard_blocks();
        let occupancy = codec.shards() * codec.shard_blocks().div_ceil(64) * 8;
        let tables = cayley_shared::search::resources::requirements(&run.job).table_bytes;
        assert_eq!(tables, blocks * moves * 4 + occupancy);
    }
}

#[test]
fn a_plain_group_far_below_n_factorial_is_ranked_by_it() {
    // M11 on 11 points, generated by (1,…,11) and (3,7,11,8)(4,10,5,6)
    // (the Mathieu group's usual pair, e.g. Conway and Sloane, SPLAG, ch. 10;
    // Wikipedia "Mathieu group M11"): order 7,920 = 11·10·9·8, against the
    // 11! = 39,916,800 the block layout would rank.
    let dir = test_dir();
    let path = dir.path().join("m11.perm");
    std::fs::write(&path, "a: (1,2,3,4,5,6,7,8,9,10,11)\nb: (3,7,11,8)(4,10,5,6)\n").unwrap();
    let a: Vec<u8> = (0..11).map(|i| (i + 1) % 11).collect();
    let mut b: Vec<u8> = (0..11).collect();
    for cycle in [[3, 7, 11, 8], [4, 10, 5, 6]] {
        for i in 0..4 {
            b[cycle[i] - 1] = cycle[(i + 1) % 4] as u8 - 1;
        }
    }
    let inverse = |g: &[u8]| {
        let mut inv = vec![0u8; g.len()];
        g.iter().enumerate().for_each(|(i, &j)| inv[j as usize] = i as u8);
        inv
    };
    let reference = reference_bfs(&[a.clone(), inverse(&a), b.clone(), inverse(&b)]);
    assert_eq!(reference.iter().sum::<u64>(), 7_920);
    let run = assert_exact(&format!("perm:{}", path.display()), &reference);
    assert!(tail_ranked(&run), "no twists: the tail is the low part");
    assert_bijection(&run);
    // A shard key of pieces asks for the block layout, which has one.
    let run = run_complete(&format!("perm:{} --shard-pieces 1", path.display()));
    assert!(matches!(run.job.space, Space::Blocks(_)));
    assert_eq!(run.result.depths, reference);
}

#[test]
fn identical_pieces_rank_as_cosets_of_the_solved_stabiliser() {
    for run in assert_tws_exact(IDENTICAL_LIKE, &["", " --shard-pieces 1"]) {
        assert!(tail_ranked(&run), "identical pieces take the tail ranking");
        let Space::Coded(codec) = &run.job.space else {
            panic!("coded")
        };
        assert!(codec.shard_blocks() * codec.shards() > 1, "several blocks");
    }
}

/// Runs the `.tws` definition `def` with each of `options`, checks the
/// codec's blocks and low states (an orbit's arrangements), and the table,
/// words and ranks against a BFS from the file's rules.
fn assert_arrangement_low_part(def: &str, options: &[&str], blocks_and_low: (u64, usize)) {
    let dir = test_dir();
    let path = dir.path().join("def.tws");
    std::fs::write(&path, def).unwrap();
    let (sets, moves, solved) = sets_and_moves(def);
    let reference = reference_tws_bfs(&sets, &moves, solved);
    for k in options {
        let run = run_complete(&format!("tws:{}{k}", path.display()));
        let Space::Coded(codec) = &run.job.space else {
            panic!("identical pieces are coded")
        };
        assert_eq!(
            (codec.shards() * codec.shard_blocks(), codec.low().states()),
            blocks_and_low
        );
        assert_eq!(run.result.depths, reference);
        assert_words_solve(&run);
        assert_bijection(&run);
    }
}

#[test]
fn an_orbits_arrangement_is_the_low_part_without_twists() {
    // C(6,3) = 20 blocks of 7!/(2!·2!·3!) = 210 states.
    assert_arrangement_low_part(ARRANGEMENT_LIKE, &["", " --shard-pieces 1"], (20, 210));
}

#[test]
fn an_arrangement_low_part_may_exceed_the_twists_limit() {
    // C(6,3) = 20 blocks of 10,080 states: E's arrangements.
    assert_arrangement_low_part(LARGE_ARRANGEMENT_LIKE, &[""], (20, 10_080));
}
