//! Free slots' pages given back to the kernel.
//!
//! Why: a slot once touched stays resident after the shard in it goes; the
//! slab hands it out again, but while the cache holds lists (on the heap)
//! instead of slots, the slab's free slots and the lists are resident side
//! by side, and a worker passed its `--memory` by what the lists took
//! (`runner/resident.rs` says when this is called, and what it bought).
//! Released slots stay on their free lists: a page given back reads as
//! zero when touched again, so a slot handed back zero stays zero and one
//! handed back as it was is still of unspecified contents.

use super::Slab;
use memmap2::UncheckedAdvice;

/// Slots released per turn of the lock: the others' takes wait for one
/// turn at most, and find the rest of the free slots meanwhile.
const RELEASE_BATCH: usize = 256;

impl Slab {
    /// Gives back the pages of free slots on the shared lists, the least
    /// recently freed first, until `most` bytes are given back; the `keep`
    /// most recently freed of each kind, which are handed out next, stay.
    /// Returns the bytes given back. Only the pages wholly inside a slot:
    /// its neighbours may be in use. Why no more than asked: a page given
    /// back is faulted in again by the next shard written to its slot.
    pub fn release_free(&self, keep: usize, most: u64) -> u64 {
        let inner = &*self.inner;
        let Some(map) = &inner._map else {
            return 0;
        };
        let page = page_size();
        let slot_bytes = inner.slot_words * 8;
        let mut released = 0;
        for zeroed in [false, true] {
            let kind = usize::from(zeroed);
            while released < most {
                // The oldest free slots not released yet, taken off the
                // list while their pages go.
                let batch: Vec<u32> = {
                    let mut free = inner.lock();
                    let start = free.released[kind];
                    let list = free.lists.of(zeroed);
                    let wanted = (most - released).div_ceil(slot_bytes as u64) as usize;
                    let end = list.len().saturating_sub(keep).min(start + RELEASE_BATCH.min(wanted));
                    if end <= start {
                        break;
                    }
                    list.drain(start..end).collect()
                };
                for &index in &batch {
                    let start = index as usize * slot_bytes;
                    let first = start.div_ceil(page) * page;
                    let last = (start + slot_bytes) / page * page;
                    if last > first {
                        // SAFETY: the slot is off every free list and owned
                        // by no `Slot`, so nothing refers to its memory while
                        // its pages go; `first..last` lies inside the slot
                        // (whole pages only), hence inside the mapping and
                        // clear of the other slots. Pages given back read as
                        // zero, a valid value for every word, and the slot's
                        // kind stays true (see the module's notes).
                        let gone =
                            unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, first, last - first) };
                        if gone.is_ok() {
                            released += (last - first) as u64;
                        }
                    }
                }
                // Back on top of the slots released before, below those
                // freed since.
                let mut free = inner.lock();
                let at = free.released[kind].min(free.lists.of(zeroed).len());
                free.released[kind] = at + batch.len();
                free.lists.of(zeroed).splice(at..at, batch);
            }
        }
        released
    }
}

/// The kernel's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: `sysconf` only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident bytes of the slab's mapping (`mincore`): other tests'
    /// memory does not count.
    fn resident_bytes(slab: &Slab) -> u64 {
        let map = slab.inner._map.as_ref().unwrap();
        let page = page_size();
        let mut pages = vec![0u8; map.len().div_ceil(page)];
        // SAFETY: the range is the whole mapping, which `slab` keeps alive,
        // and `pages` has a byte for each of its pages.
        let status = unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), pages.as_mut_ptr()) };
        assert_eq!(status, 0);
        pages.iter().filter(|&&p| p & 1 == 1).count() as u64 * page as u64
    }

    #[test]
    fn free_slots_give_their_pages_back_and_keep_their_kind() {
        // Slots of 40.5 KiB, as the 4×4 Loopover's: not page-aligned.
        let words = 5_184;
        let slab = Slab::new(words, 2_000).unwrap();
        let mut slots: Vec<_> = (0..2_000).map(|_| slab.take().unwrap()).collect();
        for (i, slot) in slots.iter_mut().enumerate() {
            slot.fill(i as u64 + 1);
        }
        let kept = slots.pop().unwrap();
        let mut zero = slots.pop().unwrap();
        zero.fill(0);
        let zero_at = zero.as_ptr();
        zero.release_zeroed();
        drop(slots);
        let before = resident_bytes(&slab);
        // The oldest slot, the first of the mapping: 10 whole pages.
        assert_eq!(slab.release_free(1, 1), 10 * 4096, "one slot");
        let released = slab.release_free(1, u64::MAX);
        let after = resident_bytes(&slab);
        // The other 1,996 slots of 10.1 pages, 9 or 10 of them whole, the
        // first not given back twice.
        assert!(released >= 1_996 * 9 * 4096, "{released}");
        assert_eq!(before - after, released + 10 * 4096, "{before} → {after}");
        assert_eq!(slab.release_free(1, u64::MAX), 0, "nothing left to give back");
        assert_eq!(slab.free_slots(), 1_999);
        // The neighbours in use keep their words.
        assert!(kept.iter().all(|&w| w == 2_000));
        // The zero slot is still handed out as zero, and is zero.
        let again = slab.take_zeroed().unwrap();
        assert!(again.known_zero());
        let again = again.into_zeroed();
        assert_eq!(again.as_ptr(), zero_at);
        assert!(again.iter().all(|&w| w == 0));
        // The most recently freed slot was kept whole; the others read as
        // zero but for their edge pages.
        let newest = slab.take().unwrap();
        assert!(newest.iter().all(|&w| w == 1_998));
        let older = slab.take().unwrap();
        assert!(older.contains(&0) && older.iter().any(|&w| w != 0));
        assert_eq!(slab.inner.lock().lists.len(), 1_996);
    }
}
