//! Building an oriented space: the twist lattice a puzzle's moves keep,
//! and its arrangements' classes under the symmetries, tabulated or
//! computed (see the parent module's notes).

use super::arrangements::{slot_orbits, Arrangements};
use super::least::{least_of_every_class, LeastImages, RepIndex};
use super::predecessors::{self, PredecessorCache};
use super::{
    ClassIndex, Derived, OrientedSpace, TwistLattice, CLASSES_PER_SHARD, MAX_ARRANGEMENT_TABLE, MAX_BLOCK_STATES,
    MAX_COMPUTED_ARRANGEMENTS,
};
use crate::puzzle::group::order_of_points;
use crate::puzzle::symmetry::oriented::OrientedSymmetries;
use crate::puzzle::Puzzle;

impl OrientedSpace {
    /// Checks that the twists of `puzzle` (group order `group_order`) are
    /// independent of the arrangement, cheaply (no symmetry search, no
    /// arrangement listed), and returns its twist lattice; or why not.
    pub fn lattice(puzzle: &Puzzle, group_order: u128) -> Result<TwistLattice, String> {
        let coding = puzzle.coding.as_ref().ok_or("not a coded puzzle")?;
        let n = puzzle.slots;
        let orbits = slot_orbits(puzzle);
        let ranks = Arrangements::new(puzzle, &orbits).size();
        if ranks > MAX_COMPUTED_ARRANGEMENTS {
            return Err(format!(
                "the reduced space of oriented pieces tests every arrangement once, and {} are more than its {}",
                ranks, MAX_COMPUTED_ARRANGEMENTS
            ));
        }
        let modulus = coding.modulus.clone();
        // The twist sums an orbit reaches: multiples of the gcd of the
        // changes its moves make (all sums when some move changes it by 1).
        let mut sum_step = Vec::with_capacity(orbits.len());
        for orbit in &orbits {
            let k = u32::from(modulus[orbit[0]]);
            if orbit.iter().any(|&s| u32::from(modulus[s]) != k) {
                return Err("an orbit's slots have different orientation moduli".into());
            }
            let step = puzzle.moves.iter().fold(k, |g, m| {
                let sum: u32 = orbit
                    .iter()
                    .map(|&s| u32::from(m.twist.get(s).copied().unwrap_or(0)))
                    .sum();
                gcd(g, sum % k)
            });
            sum_step.push(step);
        }
        let lattice: u128 = orbits.iter().zip(&sum_step).fold(1u128, |product, (o, &step)| {
            let k = u128::from(modulus[o[0]]);
            let twists = k.checked_pow(o.len() as u32 - 1).unwrap_or(u128::MAX);
            product.saturating_mul(twists.saturating_mul(k / u128::from(step)))
        });
        // The arrangements' group order first (Schreier–Sims on slots):
        // listing them can take a tenth of a second where this refuses.
        let slot_moves: Vec<Vec<u16>> = puzzle
            .moves
            .iter()
            .map(|m| m.perm.images().iter().map(|&x| u16::from(x)).collect())
            .collect();
        let arrangement_order = order_of_points(n, &slot_moves, &vec![1; n])
            .to_u128()
            .unwrap_or(u128::MAX);
        if arrangement_order.saturating_mul(lattice) != group_order {
            return Err("the twists are not independent of the arrangement".into());
        }
        let all_arrangements = arrangement_order == ranks;
        if ranks > MAX_ARRANGEMENT_TABLE && !all_arrangements {
            return Err(format!(
                "{} of its {} arrangements are reachable: above {} arrangements the reduced space of oriented pieces needs them all",
                arrangement_order, ranks, MAX_ARRANGEMENT_TABLE
            ));
        }
        Ok(TwistLattice {
            orbits,
            modulus,
            sum_step,
            all_arrangements,
        })
    }

    /// The reduced space of `puzzle` by `symmetries`, on its `lattice`
    /// ([`Self::lattice`]), or why it cannot be built.
    pub fn plan(
        puzzle: &Puzzle,
        symmetries: OrientedSymmetries,
        lattice: TwistLattice,
    ) -> Result<OrientedSpace, String> {
        let tabulate = Arrangements::new(puzzle, &lattice.orbits).size() <= MAX_ARRANGEMENT_TABLE;
        Self::plan_with(puzzle, symmetries, lattice, tabulate)
    }

    /// [`Self::plan`], with the classes tabulated or computed as asked
    /// (computed needs every arrangement reachable).
    pub(super) fn plan_with(
        puzzle: &Puzzle,
        symmetries: OrientedSymmetries,
        lattice: TwistLattice,
        tabulate: bool,
    ) -> Result<OrientedSpace, String> {
        let n = puzzle.slots;
        let TwistLattice {
            orbits,
            modulus,
            sum_step,
            all_arrangements,
        } = lattice;
        if !tabulate && !all_arrangements {
            return Err("classes are computed only when every arrangement is reachable".into());
        }
        let ranking = Arrangements::new(puzzle, &orbits);
        // A slot alone in its orbit whose sum never changes keeps twist 0.
        let mut radix = modulus.clone();
        for (orbit, &step) in orbits.iter().zip(&sum_step) {
            if orbit.len() == 1 && step == u32::from(modulus[orbit[0]]) {
                radix[orbit[0]] = 1;
            }
        }
        // Where every digit is a flip, an orbit whose flip sum never changes
        // stores one flip fewer: the last is the sum of the others. Blocks
        // then hold only valid twist vectors (2,048 instead of 4,096 on
        // the 3×3×3's edges), and the index map stays affine over GF(2).
        let mut derived = Vec::new();
        if radix.iter().all(|&r| r <= 2) {
            for (orbit, &step) in orbits.iter().zip(&sum_step) {
                if orbit.len() > 1 && radix[orbit[0]] == 2 && step == 2 {
                    let (&slot, others) = orbit.split_last().expect("two slots or more");
                    radix[slot] = 1;
                    derived.push(Derived {
                        slot,
                        others: others.to_vec(),
                    });
                }
            }
        }
        let mut derived_of = vec![None; n];
        for (d, derived) in derived.iter().enumerate() {
            for &s in &derived.others {
                derived_of[s] = Some(d as u8);
            }
        }
        let block_states: u64 = radix.iter().map(|&m| u64::from(m)).product();
        if block_states > MAX_BLOCK_STATES {
            return Err(format!("{} twist vectors per arrangement are too many", block_states));
        }
        let mut stride = vec![0u64; n];
        let mut product = 1u64;
        let mut split = 1u64;
        for s in 0..n {
            stride[s] = product;
            product *= u64::from(radix[s]);
            if product * product <= block_states {
                split = product;
            }
        }
        let block_words = block_states.div_ceil(64) as usize;
        let (index, classes) = if tabulate {
            let (class_of, via, found) = ranking.classify(&symmetries, &ranking.reachable(puzzle));
            // Shards hold classes of one stabiliser order (one weight each).
            let mut order: Vec<usize> = (0..found.len()).collect();
            order.sort_by_key(|&c| (std::cmp::Reverse(found[c].1), found[c].0));
            let mut renumber = vec![0u32; found.len()];
            for (new, &old) in order.iter().enumerate() {
                renumber[old] = new as u32;
            }
            let classes: Vec<(u64, u32)> = order.iter().map(|&c| found[c]).collect();
            let class_of = class_of
                .into_iter()
                .map(|c| if c == u32::MAX { c } else { renumber[c as usize] })
                .collect();
            (ClassIndex::Table { class_of, via }, classes)
        } else {
            let images = LeastImages::new(&ranking, &symmetries);
            let mut classes = least_of_every_class(&ranking, &images);
            classes.sort_unstable_by_key(|&(rep, stabilizer)| (std::cmp::Reverse(stabilizer), rep));
            let reps: Vec<u64> = classes.iter().map(|c| c.0).collect();
            let reps = RepIndex::new(&reps, ranking.size() as u64);
            (ClassIndex::Computed { images, reps }, classes)
        };
        let mut shard_first = vec![0u32];
        for (c, w) in classes.windows(2).enumerate() {
            let start = *shard_first.last().expect("non-empty") as usize;
            if w[0].1 != w[1].1 || c + 1 - start == CLASSES_PER_SHARD {
                shard_first.push(c as u32 + 1);
            }
        }
        shard_first.push(classes.len() as u32);
        let mut space = OrientedSpace {
            symmetries,
            modulus,
            radix,
            stride,
            block_states,
            block_words,
            valid: vec![0u64; block_words],
            split,
            derived,
            derived_of,
            arrangements: ranking,
            index,
            reps: classes.iter().map(|c| c.0).collect(),
            stabilizer: classes.iter().map(|c| c.1).collect(),
            shard_first,
            moves: puzzle.moves.len(),
            predecessors: None,
        };
        if predecessors::fits(space.classes(), space.order()) {
            space.predecessors = Some(PredecessorCache::default());
        }
        for index in 0..block_states {
            let twists = space.twists_at(index);
            let ok = orbits
                .iter()
                .zip(&sum_step)
                .all(|(o, &step)| o.iter().map(|&s| u32::from(twists[s])).sum::<u32>() % step == 0);
            if ok {
                space.valid[(index / 64) as usize] |= 1 << (index % 64);
            }
        }
        Ok(space)
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
