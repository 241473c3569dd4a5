//! The class search: every class's representative and stabiliser, found
//! once when a key space is made.

use super::canonical::RankIndex;
use super::{map_mask, Key, KeySpace, MAX_BLOCKS};

/// Subtrees of the class search per thread, so that the few large ones
/// do not leave threads idle (`KeySpace::enumerate_classes`).
const PARALLEL_SUBTREES_PER_THREAD: usize = 16;

impl KeySpace {
    /// Symmetries that fix class `class`'s representative.
    pub fn stabilizer_elements(&self, class: usize) -> Vec<usize> {
        let key = self.rep(class);
        (0..self.actions.len())
            .filter(|&k| self.apply(k, &key)[..self.blocks()] == key[..self.blocks()])
            .collect()
    }

    /// Finds every class's representative (its least key) and stabiliser
    /// by a depth-first search over block masks in rank order, pruned where
    /// the blocks fixed so far already show a smaller image. Rank order is
    /// the order of the block-mask tuples (see [`Self::canonicalize`]), so
    /// a key is its class's representative exactly when no symmetry maps it
    /// below itself. On the 4×4 Loopover (63,063,000 keys, 128 symmetries,
    /// 499,961 classes) this took 0.2 s instead of 3.3 s for marking every
    /// class's images in a bitmap of all keys.
    ///
    /// The subtrees run in parallel below the first blocks that leave
    /// enough of them (`prefixes`): pruning keeps few of the first block's
    /// masks (those least under the symmetries), so subtrees of the first
    /// block alone left one thread doing most of the search. On 2 cores,
    /// `cayley info loopover:4x4` took 0.62–0.66 s of wall with 0.70–0.74 s
    /// of CPU split that way, and 0.35–0.36 s (the same CPU) split below
    /// enough prefixes; every `cayley run` and worker pays it first. Each
    /// node then compared only the symmetries its parent left undecided
    /// (see [`Self::advance`]): 0.37–0.51 s of wall and 0.70–0.94 s of CPU
    /// before, 0.19–0.24 s and 0.32–0.41 s after.
    pub(super) fn enumerate_classes(&mut self) {
        if self.sizes.is_empty() {
            // One key, fixed by every symmetry.
            self.reps.push(0);
            self.stabilizers.push(self.actions.len() as u32);
            self.index = RankIndex::new(&self.reps, self.total);
            return;
        }
        (self.reps, self.stabilizers) = self.search(PARALLEL_SUBTREES_PER_THREAD * rayon::current_num_threads());
        self.index = RankIndex::new(&self.reps, self.total);
    }

    /// Every representative's rank and its stabiliser's order, in rank
    /// order: the subtrees below at least `subtrees` prefixes in parallel.
    pub(super) fn search(&self, subtrees: usize) -> (Vec<u64>, Vec<u32>) {
        use rayon::prelude::*;
        let (depth, prefixes) = self.prefixes(subtrees);
        let found: Vec<Vec<(u64, u32)>> = prefixes
            .par_iter()
            .map(|&(rank, free, key)| {
                let mut out = Vec::new();
                let mut key = key;
                let mut lists = PendingLists::new(self.sizes.len(), self.actions.len());
                let root = self.every_symmetry_pending();
                self.advance(&key, depth, &root, lists.at(depth))
                    .expect("prefixes are kept only where no symmetry maps them below");
                for v in 0..self.radices[depth] {
                    self.visit(depth, v, free, rank, &mut key, &mut lists, &mut out);
                }
                out
            })
            .collect();
        // The parts copied into place on the pool, each into its own slice
        // of the two vectors: joined and then split on one thread, the 4×4
        // Loopover's 499,961 classes (6 MB) took 8 ms while every other
        // thread waited.
        let classes = found.iter().map(Vec::len).sum();
        let (mut reps, mut stabilizers) = (vec![0u64; classes], vec![0u32; classes]);
        let mut places = Vec::with_capacity(found.len());
        let (mut reps_left, mut stabilizers_left) = (&mut reps[..], &mut stabilizers[..]);
        for part in &found {
            let (r, rest) = std::mem::take(&mut reps_left).split_at_mut(part.len());
            let (s, rest_s) = std::mem::take(&mut stabilizers_left).split_at_mut(part.len());
            (reps_left, stabilizers_left) = (rest, rest_s);
            places.push((part, r, s));
        }
        places.into_par_iter().for_each(|(part, r, s)| {
            for ((&(rank, stabilizer), r), s) in part.iter().zip(r).zip(s) {
                (*r, *s) = (rank, stabilizer);
            }
        });
        (reps, stabilizers)
    }

    /// The nodes of the search with the first `depth` blocks fixed that
    /// pruning keeps, in rank order, each as the digits' rank, the slots
    /// still free and the key so far: the least `depth` (never the last
    /// block) with at least `wanted` nodes.
    fn prefixes(&self, wanted: usize) -> (usize, Vec<(u64, u64, Key)>) {
        let root = self.every_symmetry_pending();
        let mut scratch = Vec::with_capacity(root.len());
        let mut nodes = vec![(0u64, self.all_slots(), [0u64; MAX_BLOCKS])];
        let mut depth = 0;
        while nodes.len() < wanted && depth + 1 < self.sizes.len() {
            let mut next = Vec::new();
            for &(rank, free, key) in &nodes {
                let mut key = key;
                for value in 0..self.radices[depth] {
                    key[depth] = self
                        .binomials
                        .unrank(value, free & self.domains[depth], self.sizes[depth]);
                    if self.advance(&key, depth + 1, &root, &mut scratch).is_some() {
                        next.push((rank * self.radices[depth] + value, free & !key[depth], key));
                    }
                }
            }
            nodes = next;
            depth += 1;
        }
        (depth, nodes)
    }

    /// Every symmetry, nothing of its image compared yet.
    fn every_symmetry_pending(&self) -> Vec<Pending> {
        (0..self.actions.len() as u32)
            .map(|symmetry| Pending { symmetry, block: 0 })
            .collect()
    }

    /// Block `b` takes its `value`-th mask among the `free` slots (`rank`
    /// holds the digits of the blocks before, `lists.at(b)` the symmetries
    /// they leave undecided); then the later blocks, in rank order. Pushes
    /// each representative with its stabiliser's order.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        b: usize,
        value: u64,
        free: u64,
        rank: u64,
        key: &mut Key,
        lists: &mut PendingLists,
        out: &mut Vec<(u64, u32)>,
    ) {
        key[b] = self.binomials.unrank(value, free & self.domains[b], self.sizes[b]);
        let rank = rank * self.radices[b] + value;
        let (undecided, still) = lists.split(b);
        let Some(stabilizer) = self.advance(key, b + 1, undecided, still) else {
            return;
        };
        if b + 1 == self.sizes.len() {
            out.push((rank, stabilizer));
            return;
        }
        let free = free & !key[b];
        for next in 0..self.radices[b + 1] {
            self.visit(b + 1, next, free, rank, key, lists, out);
        }
    }

    /// With blocks `0..fixed` of `key` set, carries on comparing the image
    /// of each symmetry in `pending` (left undecided with fewer blocks
    /// fixed) with `key`: `None` when some symmetry now maps every
    /// completion below `key`; else the symmetries still undecided go to
    /// `still`, and the result is the number whose image is decided equal
    /// to `key` (the stabiliser's order once every block is fixed).
    ///
    /// An image decided greater stays greater below this node, for the
    /// blocks that decided it stay fixed there, so its symmetry is dropped:
    /// comparing every symmetry from the first block at every node took
    /// 0.70–0.94 CPU-seconds of `cayley info loopover:4x4` (128 symmetries).
    fn advance(&self, key: &Key, fixed: usize, pending: &[Pending], still: &mut Vec<Pending>) -> Option<u32> {
        use std::cmp::Ordering;
        still.clear();
        let blocks = self.sizes.len();
        let mut equal = 0u32;
        for &Pending { symmetry, mut block } in pending {
            let k = symmetry as usize;
            let from = &self.inverse_blocks[k];
            let mut order = Ordering::Equal;
            while (block as usize) < blocks {
                let b = block as usize;
                let source = from[b] as usize;
                if source >= fixed {
                    // Undecided: the image's block `b` is not known yet.
                    still.push(Pending { symmetry, block });
                    order = Ordering::Greater;
                    break;
                }
                // Image blocks `0..=b` come from `b + 1` distinct fixed
                // blocks, so `b < fixed`: `key[b]` is set.
                order = map_mask(&self.actions[k].0, key[source]).cmp(&key[b]);
                if order != Ordering::Equal {
                    break;
                }
                block += 1;
            }
            match order {
                Ordering::Less => return None,
                Ordering::Equal => equal += 1,
                Ordering::Greater => {}
            }
        }
        Some(equal)
    }
}

/// A symmetry whose image of a partial key is not decided against the key
/// yet: the image's blocks before `block` equal the key's.
#[derive(Clone, Copy, Debug)]
struct Pending {
    symmetry: u32,
    block: u8,
}

/// The undecided symmetries at each depth of one depth-first walk, kept
/// for the whole walk so that a node allocates nothing.
struct PendingLists {
    /// `lists[d]`: those left undecided with blocks `0..d` fixed.
    lists: Vec<Vec<Pending>>,
}

impl PendingLists {
    fn new(blocks: usize, symmetries: usize) -> PendingLists {
        PendingLists {
            lists: (0..=blocks).map(|_| Vec::with_capacity(symmetries)).collect(),
        }
    }

    fn at(&mut self, fixed: usize) -> &mut Vec<Pending> {
        &mut self.lists[fixed]
    }

    /// The list with `b` blocks fixed, to read, and the one with `b + 1`,
    /// to fill.
    fn split(&mut self, b: usize) -> (&[Pending], &mut Vec<Pending>) {
        let (before, after) = self.lists.split_at_mut(b + 1);
        (&before[b], &mut after[0])
    }
}
