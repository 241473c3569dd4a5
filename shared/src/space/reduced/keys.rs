//! Block keys and their classes under the symmetries.
//!
//! The pieces are partitioned into blocks that every symmetry maps onto
//! blocks. A state's **key** is, for each block, the set of slots its pieces
//! occupy. A move maps a key to a key (it moves slot sets), and so does a
//! symmetry (it maps slot sets and relabels the blocks), so keys fall into
//! classes; the smallest key of each class (by rank) is its representative.
//! A shard of the reduced space is one representative key.

use crate::puzzle::perm::Perm;
use crate::puzzle::symmetry::Symmetries;
use crate::space::colex::Binomials;

/// Most blocks a partition may have.
pub const MAX_BLOCKS: usize = 32;

/// Slot sets of the blocks, one mask per block.
pub type Key = [u64; MAX_BLOCKS];

/// Ranking of keys and their classes.
#[derive(Clone, Debug)]
pub struct KeySpace {
    /// Number of slots.
    slots: usize,
    /// Sizes of the blocks.
    sizes: Vec<u32>,
    /// Radix of each block's digit (the last block has one choice).
    radices: Vec<u64>,
    /// Number of keys.
    total: u64,
    binomials: Binomials,
    /// For each symmetry: the slot permutation and the block each block goes to.
    actions: Vec<(Perm, Vec<u8>)>,
    /// For each symmetry: the block that goes to each block.
    inverse_blocks: Vec<Vec<u8>>,
    /// Ranks of the class representatives, ascending.
    reps: Vec<u64>,
    /// Order of each representative's stabiliser in the symmetry group.
    stabilizers: Vec<u32>,
}

impl KeySpace {
    /// Keys of blocks of the given sizes, each symmetry `k` mapping block
    /// `b` to block `block_maps[k][b]`; enumerates the class representatives.
    pub fn new(slots: usize, sizes: &[u32], symmetries: &Symmetries, block_maps: Vec<Vec<u8>>) -> KeySpace {
        assert!(sizes.len() <= MAX_BLOCKS, "too many blocks");
        let binomials = Binomials::new();
        let mut free = slots as u32;
        let radices: Vec<u64> = sizes
            .iter()
            .map(|&c| {
                let r = binomials.get(free, c);
                free -= c;
                r
            })
            .collect();
        let total = radices.iter().product();
        let inverse_blocks = block_maps
            .iter()
            .map(|to| {
                let mut from = vec![0u8; to.len()];
                for (b, &t) in to.iter().enumerate() {
                    from[t as usize] = b as u8;
                }
                from
            })
            .collect();
        let actions = symmetries.slots.iter().cloned().zip(block_maps).collect();
        let mut space = KeySpace {
            slots,
            sizes: sizes.to_vec(),
            radices,
            total,
            binomials,
            actions,
            inverse_blocks,
            reps: Vec::new(),
            stabilizers: Vec::new(),
        };
        space.enumerate_classes();
        space
    }

    /// Number of keys (before reduction).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of classes (shards of the reduced space).
    pub fn classes(&self) -> usize {
        self.reps.len()
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.sizes.len()
    }

    /// The representative key of class `class`.
    pub fn rep(&self, class: usize) -> Key {
        self.unrank(self.reps[class])
    }

    /// Order of the stabiliser of class `class`'s representative.
    pub fn stabilizer(&self, class: usize) -> u32 {
        self.stabilizers[class]
    }

    /// Rank of a key.
    pub fn rank(&self, key: &Key) -> u64 {
        let mut free = self.all_slots();
        let mut rank = 0u64;
        for (b, &radix) in self.radices.iter().enumerate() {
            rank = rank * radix + self.binomials.rank(key[b], free);
            free &= !key[b];
        }
        rank
    }

    /// The key of a rank.
    pub fn unrank(&self, mut rank: u64) -> Key {
        let mut values = [0u64; MAX_BLOCKS];
        for b in (0..self.radices.len()).rev() {
            values[b] = rank % self.radices[b];
            rank /= self.radices[b];
        }
        let mut key = [0u64; MAX_BLOCKS];
        let mut free = self.all_slots();
        for (b, &c) in self.sizes.iter().enumerate() {
            key[b] = self.binomials.unrank(values[b], free, c);
            free &= !key[b];
        }
        key
    }

    fn all_slots(&self) -> u64 {
        if self.slots == 64 {
            u64::MAX
        } else {
            (1u64 << self.slots) - 1
        }
    }

    /// The image of `key` under symmetry `k`.
    pub fn apply(&self, k: usize, key: &Key) -> Key {
        let (sigma, blocks) = &self.actions[k];
        let mut out = [0u64; MAX_BLOCKS];
        for (b, &to) in blocks.iter().enumerate() {
            out[to as usize] = map_mask(sigma, key[b]);
        }
        out
    }

    /// The class of `key` and a symmetry that maps `key` to the class's
    /// representative.
    ///
    /// The least image is found without ranking: a block's digit is the
    /// colex rank of its slot set among the slots the earlier blocks leave
    /// free, and for sets of one size colex order is the order of their
    /// masks as numbers (the larger set has the highest slot where they
    /// differ), also after removing the same slots from both. So the key of
    /// least rank is the least tuple of block masks, compared block by
    /// block, and only that one is ranked.
    pub fn canonicalize(&self, key: &Key) -> (usize, usize) {
        let blocks = self.sizes.len();
        let mut best = [0u64; MAX_BLOCKS];
        let mut best_k = 0;
        for (k, (sigma, _)) in self.actions.iter().enumerate() {
            let from = &self.inverse_blocks[k];
            let mut image = [0u64; MAX_BLOCKS];
            // Image blocks are worked out only while the prefix ties.
            let mut order = if k == 0 {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Equal
            };
            for b in 0..blocks {
                image[b] = map_mask(sigma, key[from[b] as usize]);
                if order == std::cmp::Ordering::Equal {
                    order = image[b].cmp(&best[b]);
                    if order == std::cmp::Ordering::Greater {
                        break;
                    }
                }
            }
            // Equal images keep the earlier symmetry.
            if order == std::cmp::Ordering::Less {
                best = image;
                best_k = k;
            }
        }
        let rank = self.rank(&best);
        let class = self
            .reps
            .binary_search(&rank)
            .expect("the least image of a key is a representative");
        (class, best_k)
    }

    /// Symmetries that fix class `class`'s representative.
    pub fn stabilizer_elements(&self, class: usize) -> Vec<usize> {
        let key = self.rep(class);
        (0..self.actions.len())
            .filter(|&k| self.apply(k, &key)[..self.blocks()] == key[..self.blocks()])
            .collect()
    }

    /// Visits the keys in rank order; each key not yet seen is the smallest
    /// of its class, whose members are then marked.
    fn enumerate_classes(&mut self) {
        let mut seen = vec![0u64; self.total.div_ceil(64) as usize];
        let order = self.actions.len() as u32;
        for rank in 0..self.total {
            if seen[(rank / 64) as usize] >> (rank % 64) & 1 == 1 {
                continue;
            }
            let key = self.unrank(rank);
            let mut members = 0u32;
            for k in 0..self.actions.len() {
                let image = self.rank(&self.apply(k, &key));
                let (w, b) = ((image / 64) as usize, image % 64);
                if seen[w] >> b & 1 == 0 {
                    seen[w] |= 1 << b;
                    members += 1;
                }
            }
            self.reps.push(rank);
            self.stabilizers.push(order / members);
        }
    }
}

/// The slots `mask` sent through `sigma`.
#[inline]
pub fn map_mask(sigma: &Perm, mask: u64) -> u64 {
    let mut out = 0u64;
    let mut bits = mask;
    while bits != 0 {
        out |= 1u64 << sigma[bits.trailing_zeros() as usize];
        bits &= bits - 1;
    }
    out
}
