//! Independent facts about Loopover's board symmetries, for checking the
//! reduced tables: the symmetries written from the board's geometry,
//! conjugation of a state, Burnside's count of classes from centraliser
//! sizes, and classes per depth by brute force over every state.

use std::collections::{HashMap, HashSet};

/// Kept under its old path for callers not yet moved to [`crate::published`].
pub use crate::published::published_loopover_mtm;

/// The image list of the board symmetry `name` of an `rows × cols` board
/// (the names `cayley` reports: shift-right, shift-down, mirror-left-right,
/// mirror-top-bottom, transpose).
pub fn loopover_symmetry(rows: usize, cols: usize, name: &str) -> Vec<u8> {
    (0..rows * cols)
        .map(|s| {
            let (r, c) = (s / cols, s % cols);
            let (r, c) = match name {
                "shift-right" => (r, (c + 1) % cols),
                "shift-down" => ((r + 1) % rows, c),
                "mirror-left-right" => (r, cols - 1 - c),
                "mirror-top-bottom" => (rows - 1 - r, c),
                "transpose" => (c, r),
                other => panic!("unknown symmetry {}", other),
            };
            (r * cols + c) as u8
        })
        .collect()
}

/// Every product of the generators.
pub fn closure(generators: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = generators[0].len();
    let mut all: Vec<Vec<u8>> = vec![(0..n as u8).collect()];
    let mut seen: HashSet<Vec<u8>> = all.iter().cloned().collect();
    let mut i = 0;
    while i < all.len() {
        for g in generators {
            let product: Vec<u8> = all[i].iter().map(|&x| g[x as usize]).collect();
            if seen.insert(product.clone()) {
                all.push(product);
            }
        }
        i += 1;
    }
    all
}

/// `σ p σ⁻¹` for a state in position notation whose pieces are named by
/// their home slots: piece `σ(i)` goes to `σ(p[i])`.
pub fn conjugate(sigma: &[u8], state: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; state.len()];
    for (piece, &slot) in state.iter().enumerate() {
        out[sigma[piece] as usize] = sigma[slot as usize];
    }
    out
}

/// Number of classes of the group `S_n` (or `A_n` when `alternating`) under
/// conjugation by `group`: Burnside's lemma, where the elements fixed by
/// conjugation with `σ` are `σ`'s centraliser. In `S_n` it has
/// `Π k^{m_k} m_k!` elements (`m_k` cycles of length `k`); in `A_n` half of
/// them, unless every cycle length is odd and distinct (then the whole
/// centraliser is even).
pub fn burnside_classes(group: &[Vec<u8>], alternating: bool) -> u128 {
    let mut total = 0u128;
    for sigma in group {
        let n = sigma.len();
        let mut seen = vec![false; n];
        let mut lengths: HashMap<usize, u32> = HashMap::new();
        for s in 0..n {
            let mut len = 0;
            let mut x = s;
            while !seen[x] {
                seen[x] = true;
                x = sigma[x] as usize;
                len += 1;
            }
            if len > 0 {
                *lengths.entry(len).or_default() += 1;
            }
        }
        let centraliser: u128 = lengths
            .iter()
            .map(|(&k, &m)| (k as u128).pow(m) * (1..=m as u128).product::<u128>())
            .product();
        let all_even = lengths.iter().all(|(&k, &m)| k % 2 == 1 && m == 1);
        total += if alternating && !all_even {
            centraliser / 2
        } else {
            centraliser
        };
    }
    total / group.len() as u128
}

/// States and classes at every depth, by a plain BFS over every state and a
/// class named by its smallest conjugate.
pub fn classes_by_depth(generators: &[Vec<u8>], group: &[Vec<u8>]) -> (Vec<u64>, Vec<u64>) {
    let n = generators[0].len();
    let start: Vec<u8> = (0..n as u8).collect();
    let mut seen: HashSet<Vec<u8>> = HashSet::from([start.clone()]);
    let mut frontier = vec![start];
    let (mut states, mut classes) = (Vec::new(), Vec::new());
    while !frontier.is_empty() {
        let reps: HashSet<Vec<u8>> = frontier
            .iter()
            .map(|p| group.iter().map(|s| conjugate(s, p)).min().expect("a group"))
            .collect();
        states.push(frontier.len() as u64);
        classes.push(reps.len() as u64);
        let mut next = Vec::new();
        for p in &frontier {
            for g in generators {
                let moved: Vec<u8> = p.iter().map(|&s| g[s as usize]).collect();
                if seen.insert(moved.clone()) {
                    next.push(moved);
                }
            }
        }
        frontier = next;
    }
    (states, classes)
}
