//! Where a class's predecessors lie: for a class and a move, the class of
//! the arrangement the undone move takes its representative to, and the
//! symmetry that canonicalises it.
//!
//! The answer does not depend on the level, yet the kernel needs it for
//! every class and move at every level. Where classes are computed
//! (`least.rs`) finding it costs a least image, about 0.5 µs: 1.8·10⁸ of
//! them on the 3×3×3's edges, some 50 s of two threads a level however
//! sparse the level. So it is kept, one `u32` per class and move (720 MB
//! there), filled when first asked and shared by every clone of the space.

use super::OrientedSpace;
use crate::puzzle::Move;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// The kept answers of a space whose classes are computed.
#[derive(Clone, Default)]
pub(super) struct PredecessorCache {
    /// Per class and move (class-major): `class << element_bits | element`,
    /// plus one; 0 while not yet found. Allocated when first asked, so that
    /// planning (`cayley info`) never holds it.
    entries: Arc<OnceLock<Vec<AtomicU32>>>,
}

impl std::fmt::Debug for PredecessorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filled = self.entries.get().map_or(0, |e| e.len());
        write!(f, "PredecessorCache({} entries)", filled)
    }
}

/// A cache is not part of a space's value: two plans of the same puzzle
/// compare equal whatever each has found so far.
impl PartialEq for PredecessorCache {
    fn eq(&self, _: &PredecessorCache) -> bool {
        true
    }
}

impl Eq for PredecessorCache {}

/// Bits of the symmetry element in an entry, for a group of `order`.
fn element_bits(order: usize) -> u32 {
    usize::BITS - (order.max(2) - 1).leading_zeros()
}

/// Whether every (class, element) pair packs into an entry (below
/// `u32::MAX`, which the "plus one" needs).
pub(super) fn fits(classes: usize, order: usize) -> bool {
    (classes as u64) << element_bits(order) < u64::from(u32::MAX)
}

impl OrientedSpace {
    /// The class of the arrangement that `inverse` (move `move_index`
    /// undone) takes `class`'s representative to, and the element that
    /// canonicalises it.
    pub fn predecessor(&self, class: usize, move_index: usize, inverse: &Move) -> (usize, usize) {
        let Some(cache) = &self.predecessors else {
            return self.find_predecessor(class, inverse);
        };
        let entries = cache.entries.get_or_init(|| {
            let n = self.classes() * self.moves;
            (0..n).map(|_| AtomicU32::new(0)).collect()
        });
        let entry = &entries[class * self.moves + move_index];
        let bits = element_bits(self.order());
        // Relaxed: an entry is written whole, and two threads that both
        // find it unset compute and store the same value.
        match entry.load(Ordering::Relaxed) {
            0 => {
                let (source, k) = self.find_predecessor(class, inverse);
                entry.store((((source as u32) << bits) | k as u32) + 1, Ordering::Relaxed);
                (source, k)
            }
            packed => {
                let packed = packed - 1;
                ((packed >> bits) as usize, (packed & ((1 << bits) - 1)) as usize)
            }
        }
    }

    /// [`Self::predecessor`] worked out afresh.
    pub(super) fn find_predecessor(&self, class: usize, inverse: &Move) -> (usize, usize) {
        let rep = self.rep(class);
        // On the stack: without the cache this runs for every block and
        // move, twice a level.
        let mut q = [0u8; crate::puzzle::perm::MAX_POINTS];
        for (z, &piece) in rep.iter().enumerate() {
            q[inverse.perm[z] as usize] = piece;
        }
        self.canonical(&q[..rep.len()])
    }

    /// Bytes the predecessor cache takes once filled (0 where classes are
    /// looked up, not computed).
    pub(super) fn predecessor_cache_bytes(&self) -> u64 {
        match self.predecessors {
            Some(_) => (self.classes() * self.moves * std::mem::size_of::<AtomicU32>()) as u64,
            None => 0,
        }
    }
}
