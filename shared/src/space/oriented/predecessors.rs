//! Where a class's predecessors lie: for a class and a move, the class of
//! the arrangement the undone move takes its representative to, and the
//! symmetry that canonicalises it.
//!
//! The answer does not depend on the level, yet the kernel needs it for
//! every class and move twice a level (listing a task's sources, then
//! expanding). Where classes are computed (`least.rs`) finding it costs a
//! least image, about 0.5 µs: 1.8·10⁸ of them on the 3×3×3's edges, some
//! 50 s of two threads a level however sparse the level; where they are
//! tabulated, a rank and an unrank. So it is kept, one `u32` per class and
//! move (720 MB on the edges, 2.2 MB on their U, R, F subgroup), filled
//! when first asked and shared by every clone of the space.

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
    /// For each move (`inverses[m]` undoes move `m`): the class of the
    /// arrangement it takes `class`'s representative to, and the element
    /// that canonicalises it; appended to `out`.
    pub fn predecessors_of(&self, class: usize, inverses: &[Move], out: &mut Vec<(usize, usize)>) {
        let Some(cache) = &self.predecessors else {
            let rep = self.rep(class);
            out.extend(inverses.iter().map(|inverse| self.find_predecessor(&rep, inverse)));
            return;
        };
        let entries = cache.entries.get_or_init(|| {
            let n = self.classes() * self.moves;
            (0..n).map(|_| AtomicU32::new(0)).collect()
        });
        let bits = element_bits(self.order());
        let row = &entries[class * self.moves..(class + 1) * self.moves];
        let mut rep = None;
        for (entry, inverse) in row.iter().zip(inverses) {
            // Relaxed: an entry is written whole, and two threads that both
            // find it unset compute and store the same value.
            match entry.load(Ordering::Relaxed) {
                0 => {
                    let rep = rep.get_or_insert_with(|| self.rep(class));
                    let (source, k) = self.find_predecessor(rep, inverse);
                    entry.store((((source as u32) << bits) | k as u32) + 1, Ordering::Relaxed);
                    out.push((source, k));
                }
                packed => {
                    let packed = packed - 1;
                    out.push(((packed >> bits) as usize, (packed & ((1 << bits) - 1)) as usize));
                }
            }
        }
    }

    /// The class of the arrangement `inverse` takes `rep` to, and the
    /// element that canonicalises it, worked out afresh.
    pub(super) fn find_predecessor(&self, rep: &[u8], inverse: &Move) -> (usize, usize) {
        // On the stack: without the cache this runs for every block and
        // move, twice a level.
        let mut q = [0u8; crate::puzzle::perm::MAX_POINTS];
        for (z, &piece) in rep.iter().enumerate() {
            q[inverse.perm[z] as usize] = piece;
        }
        self.canonical(&q[..rep.len()])
    }

    /// Bytes the predecessor cache takes once filled (0 without one).
    pub(super) fn predecessor_cache_bytes(&self) -> u64 {
        match self.predecessors {
            Some(_) => (self.classes() * self.moves * std::mem::size_of::<AtomicU32>()) as u64,
            None => 0,
        }
    }
}
