use super::points::{compose, Rng};
use super::*;
use crate::space::rank::factorial;
use std::collections::HashSet;

/// Brute force: every element, by closing the identity under the generators.
fn enumerate(degree: usize, gens: &[Vec<u16>]) -> u64 {
    let id: Vec<u16> = (0..degree as u16).collect();
    let mut seen = HashSet::from([id.clone()]);
    let mut queue = vec![id];
    while let Some(x) = queue.pop() {
        for g in gens {
            let y = compose(g, &x);
            if seen.insert(y.clone()) {
                queue.push(y);
            }
        }
    }
    seen.len() as u64
}

fn cycle(n: usize, pts: &[u16]) -> Vec<u16> {
    let mut img: Vec<u16> = (0..n as u16).collect();
    for w in 0..pts.len() {
        img[pts[w] as usize] = pts[(w + 1) % pts.len()];
    }
    img
}

/// Random "twisty" generators: `sets` of (pieces, orientations), each
/// generator permuting the pieces of every set and twisting them.
fn twisty_gens(sets: &[(u16, u16)], count: usize, rng: &mut Rng) -> (usize, Vec<Vec<u16>>, Vec<u16>) {
    let degree: usize = sets.iter().map(|&(n, k)| (n * k) as usize).sum();
    let piece_len: Vec<u16> = sets
        .iter()
        .flat_map(|&(n, k)| std::iter::repeat_n(k, n as usize))
        .collect();
    let gens = (0..count)
        .map(|_| {
            let mut g = Vec::with_capacity(degree);
            let mut offset = 0u16;
            for &(n, k) in sets {
                let mut perm: Vec<u16> = (0..n).collect();
                for i in (1..n as usize).rev() {
                    perm.swap(i, rng.below(i + 1));
                }
                for &to in &perm {
                    let t = rng.below(k as usize) as u16;
                    g.extend((0..k).map(|a| offset + to * k + (a + t) % k));
                }
                offset += n * k;
            }
            g
        })
        .collect();
    (degree, gens, piece_len)
}

#[test]
fn chain_orders_match_enumeration() {
    let mut rng = Rng::new(7);
    for degree in [4usize, 6, 7, 8] {
        for count in 1..=3 {
            let gens: Vec<Vec<u16>> = (0..count)
                .map(|_| {
                    let mut p: Vec<u16> = (0..degree as u16).collect();
                    // Sparse random permutations, so many small groups appear.
                    for _ in 0..rng.below(3) + 1 {
                        let (a, b) = (rng.below(degree), rng.below(degree));
                        p.swap(a, b);
                    }
                    p
                })
                .collect();
            let chain = Chain::generated(degree, &gens, &[]);
            assert_eq!(chain.order(), BigNat::from(enumerate(degree, &gens)), "{:?}", gens);
            for g in &gens {
                assert!(chain.contains(g));
            }
        }
    }
}

#[test]
fn symmetric_and_alternating_orders() {
    for n in 3..=12usize {
        let full = cycle(n, &(0..n as u16).collect::<Vec<_>>());
        let swap = cycle(n, &[0, 1]);
        let perms = |gens: &[Vec<u16>]| {
            gens.iter()
                .map(|g| Perm::from_images(g.iter().map(|&x| x as u8).collect()).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(group_order(n, &perms(&[full, swap])), factorial(n));
        let threes: Vec<Vec<u16>> = (0..n - 2)
            .map(|i| cycle(n, &[i as u16, i as u16 + 1, i as u16 + 2]))
            .collect();
        assert_eq!(group_order(n, &perms(&threes)), factorial(n) / 2);
    }
}

#[test]
fn tuple_orbits_count_arrangements() {
    let perm = |v: Vec<u16>| Perm::from_images(v.into_iter().map(|x| x as u8).collect()).unwrap();
    // S_6 sends 3 points to 6·5·4 ordered triples; A_5 acts 3-transitively.
    let s6 = [perm(cycle(6, &[0, 1, 2, 3, 4, 5])), perm(cycle(6, &[0, 1]))];
    assert_eq!(tuple_orbit_size(6, &s6, &[2, 4, 5]), 120);
    let a5 = [perm(cycle(5, &[0, 1, 2])), perm(cycle(5, &[2, 3, 4]))];
    assert_eq!(tuple_orbit_size(5, &a5, &[0, 1, 2]), 60);
    assert_eq!(tuple_orbit_size(5, &a5, &[0, 1, 2, 3]), 60);
    assert_eq!(tuple_orbit_size(6, &s6[..1], &[3, 0]), 6);
    assert_eq!(tuple_orbit_size(6, &s6[..1], &[]), 1);
}

#[test]
fn split_by_components_agrees_with_one_chain() {
    let mut rng = Rng::new(11);
    let shapes: [&[(u16, u16)]; 5] = [
        &[(8, 3), (12, 2)],
        &[(6, 1), (6, 1), (4, 3)],
        &[(5, 2), (7, 1), (3, 4)],
        &[(9, 1), (4, 2)],
        &[(10, 1)],
    ];
    let mut certified = 0;
    for shape in shapes {
        for count in 1..=3 {
            let (degree, gens, piece_len) = twisty_gens(shape, count, &mut rng);
            let chain = Chain::generated(degree, &gens, &[]).order();
            if let Some(split) = split::order_by_components(degree, &gens, &piece_len) {
                assert_eq!(split, chain, "{:?} with {} generators", shape, count);
                certified += 1;
            }
        }
    }
    // Random generators mostly give big groups that split cleanly.
    assert!(certified >= 8, "only {} of 15 groups were split", certified);
}

#[test]
fn coupled_components_are_never_split_wrongly() {
    // Two copies of S_5 moved in lockstep (a diagonal), next to a free S_4:
    // no element moves one copy alone, so the split must not certify the
    // copies separately; the order is 5! · 4!.
    let degree = 14;
    let both = |a: &[u16]| -> Vec<u16> {
        let mut g: Vec<u16> = (0..degree as u16).collect();
        for (i, &x) in a.iter().enumerate() {
            g[i] = x;
            g[5 + i] = 5 + x;
        }
        g
    };
    let mut gens = vec![both(&[1, 2, 3, 4, 0]), both(&[1, 0, 2, 3, 4])];
    gens.push(cycle(degree, &[10, 11, 12, 13]));
    gens.push(cycle(degree, &[10, 11]));
    let expected = BigNat::from(120u64 * 24);
    assert_eq!(Chain::generated(degree, &gens, &[]).order(), expected);
    if let Some(split) = split::order_by_components(degree, &gens, &vec![1; degree]) {
        assert_eq!(split, expected);
    }
    assert_eq!(order_of_points(degree, &gens, &vec![1; degree]), expected);
}
