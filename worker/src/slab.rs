//! Every shard-sized buffer of a worker lives in one anonymous memory map
//! of fixed-size slots: cached shards, the batch's seen sets and outputs.
//!
//! Why: shards of 40.5 KiB (the 4×4 Loopover) are too small for a mapping
//! each (a 13 GiB budget would be 336,000 mappings, over Linux's default
//! limit of 65,530), so they came from glibc's arenas, where freeing and
//! loading them in LRU order left holes that stayed resident: a worker
//! under `--memory 13G` held 13.4 GiB (docs/history.md), and keeping it near
//! the budget took glibc-only `mallopt`/`malloc_trim` calls after every
//! task. A slab of slots cannot fragment: a freed slot is the next one
//! handed out (last in, first out, so the pages already touched are reused
//! first; a pool thread's own freed slots first, see `stashes`), and the
//! process's shard memory is at most the map's size, on any allocator.
//!
//! Slots handed back known to be all zero ([`Slot::release_cleared`]: a
//! sparse shard's user clears the few words its listed bits are in) are
//! kept apart, and [`Slab::take_zeroed`] hands them out without clearing
//! them. Why: zeroing a 40.5 KiB output for every target shard was 2.5 %
//! of a 1-thread run of the 4×4 Loopover to depth 8 and 3.2 % of a
//! 2-thread one (`perf`; a slot last written by the other core is moved
//! over line by line), for shards that gain about 70 states.

mod release;
pub(crate) use release::page_size;
mod stashes;

use memmap2::{MmapMut, MmapOptions};
use stashes::{Lists, Stashes};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// A fixed number of slots of `slot_words` words each.
#[derive(Clone)]
pub struct Slab {
    inner: Arc<Inner>,
}

struct Inner {
    /// Owns the mapping `base` points into; unmapped when the last slot
    /// and the last [`Slab`] handle are gone.
    _map: Option<MmapMut>,
    base: *mut u64,
    slot_words: usize,
    slots: usize,
    /// Slots handed back, the most recently freed last, and the first slot
    /// never handed out.
    free: Mutex<FreeSlots>,
    /// Slots handed back by each pool thread, kept for its next take.
    stashes: Stashes,
}

/// The free slots without a list entry per slot: slots past `untouched`
/// were never handed out. A list of every slot cost 4 bytes a slot, and a
/// tiny puzzle's one-word shards made that 6 GB and 4 s for a 12 GB
/// budget (`cayley run loopover:2x2`).
#[derive(Default)]
struct FreeSlots {
    /// Slots handed back as they were, and all zero.
    lists: Lists,
    untouched: u32,
    /// How many slots at the bottom of each list (as they were, zero) have
    /// had their pages given back (see `release`).
    released: [usize; 2],
}

impl FreeSlots {
    /// A slot of the shared list of one kind, the most recently freed.
    fn pop(&mut self, zeroed: bool) -> Option<u32> {
        let list = self.lists.of(zeroed);
        let index = list.pop()?;
        let len = list.len();
        let released = &mut self.released[usize::from(zeroed)];
        *released = (*released).min(len);
        Some(index)
    }

    /// A slot never handed out (its memory reads as zero), if any is left.
    fn untouched(&mut self, slots: usize) -> Option<u32> {
        ((self.untouched as usize) < slots).then(|| {
            self.untouched += 1;
            self.untouched - 1
        })
    }
}

// SAFETY: `base` points into the mapping `_map` owns, which lives exactly
// as long as `Inner`; the only access to its memory is through `Slot`s, and
// each slot index is owned by at most one `Slot` at a time (an index is on
// one free list or past `untouched`, and is handed out once until its
// `Slot` is dropped), so sharing `Inner`
// between threads shares no memory two threads can both write.
unsafe impl Send for Inner {}
// SAFETY: as above; the free lists and the stashes are behind mutexes.
unsafe impl Sync for Inner {}

impl Slab {
    /// A slab of `slots` slots of `slot_words` words. The memory is
    /// reserved, not touched: pages become resident as slots are first used.
    pub fn new(slot_words: usize, slots: usize) -> std::io::Result<Slab> {
        Slab::for_pool(slot_words, slots, 0)
    }

    /// [`Self::new`] with a stash of free slots for each thread of a pool
    /// of `threads` (see `stashes`).
    pub fn for_pool(slot_words: usize, slots: usize, threads: usize) -> std::io::Result<Slab> {
        let bytes = slot_words * slots * 8;
        let (map, base) = if bytes == 0 {
            (None, std::ptr::NonNull::<u64>::dangling().as_ptr())
        } else {
            let mut map = MmapOptions::new().len(bytes).map_anon()?;
            // Transparent huge pages on request (the kernel's `madvise`
            // mode): a thread's random bit writes and tests cross many
            // shards, and 2 MiB pages keep them in the TLB and fault in
            // 512 times fewer pages. Measured on 2 cores (docs/history.md,
            // "Every core at work"): the 4×4 to depth 8 at 2 threads 58.8–
            // 60.0 s → 50.9–53.9 s, system time 14–17 s → 9–10 s; the 2×6
            // unreduced 7.9–8.3 s → 7.5–7.7 s; peak RSS unchanged (the
            // slab never holds more than its budget). Advice only: a
            // kernel that refuses it changes nothing.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            let base = map.as_mut_ptr() as *mut u64;
            (Some(map), base)
        };
        // Indices are u32: a slab of more slots uses the first 2^32 - 1.
        let slots = slots.min(u32::MAX as usize);
        let free = FreeSlots::default();
        Ok(Slab {
            inner: Arc::new(Inner {
                _map: map,
                base,
                slot_words,
                slots,
                free: Mutex::new(free),
                stashes: Stashes::new(threads),
            }),
        })
    }

    /// A free slot (of unspecified contents), if any: one handed back as
    /// it was before one handed back zeroed, which a caller of
    /// [`Self::take_zeroed`] may want.
    pub fn take(&self) -> Option<Slot> {
        let (index, _) = self.take_kind(false)?;
        Some(self.slot(index))
    }

    /// A free slot to be used all zero, if any: one known to be zero when
    /// there is one, else one to clear ([`ZeroSlot::into_zeroed`], outside
    /// whatever lock the caller holds). A slot handed back is cleared
    /// before an untouched one is taken, so that the pages in use stay
    /// the fewest.
    pub fn take_zeroed(&self) -> Option<ZeroSlot> {
        let (index, zero) = self.take_kind(true)?;
        Some(ZeroSlot {
            slot: self.slot(index),
            dirty: !zero,
        })
    }

    /// A free slot and whether it is known to be zero: of the kind
    /// `zeroed_first` names first, from the calling thread's stash, then
    /// the shared lists; then of the other kind the same way; then an
    /// untouched slot; then one from another thread's stash.
    fn take_kind(&self, zeroed_first: bool) -> Option<(u32, bool)> {
        let inner = &*self.inner;
        let mut own = inner.stashes.own();
        if let Some(index) = own.as_mut().and_then(|own| own.of(zeroed_first).pop()) {
            return Some((index, zeroed_first));
        }
        {
            let mut free = inner.lock();
            if let Some(index) = free.pop(zeroed_first) {
                return Some((index, zeroed_first));
            }
            let other = !zeroed_first;
            if let Some(index) = own.as_mut().and_then(|own| own.of(other).pop()) {
                return Some((index, other));
            }
            if let Some(index) = free.pop(other) {
                return Some((index, other));
            }
            if let Some(index) = free.untouched(inner.slots) {
                return Some((index, true));
            }
        }
        drop(own);
        inner.stashes.take_any(zeroed_first)
    }

    fn slot(&self, index: u32) -> Slot {
        Slot {
            backing: Backing::Slab {
                inner: self.inner.clone(),
                index,
                zeroed: false,
            },
        }
    }

    /// Slots of the slab.
    pub fn slots(&self) -> usize {
        self.inner.slots
    }

    /// Slots not handed out.
    pub fn free_slots(&self) -> usize {
        let stashed = self.inner.stashes.len();
        let free = self.inner.lock();
        free.lists.len() + self.inner.slots - free.untouched as usize + stashed
    }

    /// Slots ever handed out: the slab's resident part, since a freed slot
    /// is handed out again before an untouched one (but for the few in
    /// other threads' stashes, see `stashes`).
    pub fn touched(&self) -> usize {
        self.inner.lock().untouched as usize
    }

    /// Words of a slot.
    pub fn slot_words(&self) -> usize {
        self.inner.slot_words
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, FreeSlots> {
        // The list is only ever pushed or popped whole: a panic elsewhere
        // cannot leave it half-changed.
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One shard-sized buffer: a slot of a [`Slab`], or (when the slab is
/// exhausted, which the worker's sizing avoids) a buffer of its own.
pub struct Slot {
    backing: Backing,
}

enum Backing {
    /// `zeroed`: handed back all zero when dropped (see
    /// [`Slot::release_zeroed`]).
    Slab {
        inner: Arc<Inner>,
        index: u32,
        zeroed: bool,
    },
    Heap(Box<[u64]>),
}

/// A slot for a caller that needs it all zero, cleared only if it may not
/// be: see [`Slab::take_zeroed`].
pub struct ZeroSlot {
    slot: Slot,
    dirty: bool,
}

impl ZeroSlot {
    /// A buffer of `words` zeros outside any slab.
    pub fn heap(words: usize) -> ZeroSlot {
        ZeroSlot {
            slot: Slot::heap(words),
            dirty: false,
        }
    }

    /// True when the slot was handed back zero (or never used).
    #[cfg(test)]
    pub fn known_zero(&self) -> bool {
        !self.dirty
    }

    /// The slot, all zero.
    pub fn into_zeroed(self) -> Slot {
        let mut slot = self.slot;
        if self.dirty {
            slot.fill(0);
        }
        slot
    }
}

impl Slot {
    /// A buffer of `words` zeros outside any slab.
    pub fn heap(words: usize) -> Slot {
        Slot {
            backing: Backing::Heap(vec![0u64; words].into_boxed_slice()),
        }
    }

    /// True when the buffer is outside the slab.
    pub fn is_heap(&self) -> bool {
        matches!(self.backing, Backing::Heap(_))
    }

    /// Hands the slot back for [`Slab::take_zeroed`] to give out without
    /// clearing: the caller knows every word is zero. (Checked in debug
    /// builds; a word left set would be a state no search reached.)
    pub fn release_zeroed(mut self) {
        debug_assert!(self.iter().all(|&w| w == 0), "a slot released as zero holds bits");
        if let Backing::Slab { zeroed, .. } = &mut self.backing {
            *zeroed = true;
        }
    }

    /// [`Self::release_zeroed`] for a slot whose only set bits are at
    /// `positions`: only the words holding them are cleared.
    pub fn release_cleared(mut self, positions: &[u32]) {
        for &p in positions {
            self[p as usize / 64] = 0;
        }
        self.release_zeroed();
    }
}

impl Deref for Slot {
    type Target = [u64];

    #[inline]
    fn deref(&self) -> &[u64] {
        match &self.backing {
            // SAFETY: `index < slots`, so the slot's words lie inside the
            // mapping, which `inner` keeps alive; the mapping is page-aligned
            // and slots are whole words, so the pointer is aligned for u64;
            // and this `Slot` is the only owner of the index (see `Inner`),
            // so no `&mut` to these words exists while `&self` is borrowed.
            Backing::Slab { inner, index, .. } => unsafe {
                std::slice::from_raw_parts(inner.base.add(*index as usize * inner.slot_words), inner.slot_words)
            },
            Backing::Heap(words) => words,
        }
    }
}

impl DerefMut for Slot {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        match &mut self.backing {
            // SAFETY: as in `deref`; `&mut self` makes this the only borrow
            // of the slot's words.
            Backing::Slab { inner, index, .. } => unsafe {
                std::slice::from_raw_parts_mut(inner.base.add(*index as usize * inner.slot_words), inner.slot_words)
            },
            Backing::Heap(words) => words,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Backing::Slab { inner, index, zeroed } = &self.backing {
            if !inner.stashes.keep(*index, *zeroed) {
                inner.lock().lists.of(*zeroed).push(*index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident bytes of this process (`/proc/self/statm`, 4 KiB pages).
    fn resident_bytes() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
    }

    /// A budget of one-word shards is a billion slots; making the slab
    /// must not touch memory in proportion (a list of every free slot was
    /// 4 GB here).
    #[test]
    fn a_slab_of_a_billion_tiny_slots_costs_nothing_until_used() {
        let before = resident_bytes();
        let slab = Slab::new(1, 1_000_000_000).unwrap();
        let a = slab.take().unwrap();
        let b = slab.take().unwrap();
        let address = b.as_ptr();
        drop(b);
        let again = slab.take().unwrap();
        assert_eq!(again.as_ptr(), address, "the freed slot first");
        assert_eq!(slab.free_slots(), 1_000_000_000 - 2);
        drop((a, again));
        assert!(
            resident_bytes() < before + (64 << 20),
            "{} → {}",
            before,
            resident_bytes()
        );
    }

    #[test]
    fn slots_are_disjoint_reused_last_in_first_out_and_bounded() {
        let slab = Slab::new(4, 3).unwrap();
        let mut a = slab.take().unwrap();
        let mut b = slab.take().unwrap();
        let mut c = slab.take().unwrap();
        assert!(slab.take().is_none(), "three slots only");
        a.fill(1);
        b.fill(2);
        c.fill(3);
        assert_eq!((&a[..], &b[..], &c[..]), (&[1; 4][..], &[2; 4][..], &[3; 4][..]));
        let address = b.as_ptr();
        drop(b);
        assert_eq!(slab.free_slots(), 1);
        let again = slab.take().unwrap();
        assert_eq!(again.as_ptr(), address, "the freed slot is handed out again");
        assert_eq!(&again[..], &[2; 4], "contents are left as they were");
        drop((a, c, again));
        assert_eq!(slab.free_slots(), 3);
    }

    #[test]
    fn slots_handed_back_zero_skip_the_clearing_and_others_are_cleared() {
        let slab = Slab::new(4, 3).unwrap();
        let mut dirty = slab.take().unwrap();
        dirty.fill(5);
        let fresh = slab.take_zeroed().unwrap();
        assert!(!fresh.dirty, "an untouched slot reads as zero");
        let mut sparse = fresh.into_zeroed();
        assert_eq!(&sparse[..], &[0; 4]);
        sparse[1] = 1 << 3 | 1 << 9;
        sparse[3] = 1;
        let (at_dirty, at_sparse) = (dirty.as_ptr(), sparse.as_ptr());
        drop(dirty);
        sparse.release_cleared(&[64 + 3, 64 + 9, 192]);
        assert_eq!(slab.free_slots(), 3);
        // The slot handed back zero first, without clearing it; then the
        // one handed back as it was, cleared, before the untouched one.
        let zero = slab.take_zeroed().unwrap();
        assert!(!zero.dirty);
        assert_eq!(zero.slot.as_ptr(), at_sparse);
        assert_eq!(&zero.slot[..], &[0; 4], "its listed bits were cleared");
        let cleared = slab.take_zeroed().unwrap();
        assert!(cleared.dirty);
        assert_eq!(cleared.slot.as_ptr(), at_dirty);
        assert_eq!(&cleared.into_zeroed()[..], &[0; 4]);
        // A caller of `take` gets a slot handed back as it was before one
        // handed back zero.
        let plain = Slab::new(4, 2).unwrap();
        let mut a = plain.take().unwrap();
        a.fill(0);
        let at_a = a.as_ptr();
        a.release_zeroed();
        let b = plain.take().unwrap();
        let at_b = b.as_ptr();
        drop(b);
        assert_eq!(plain.take().unwrap().as_ptr(), at_b, "the slot handed back as it was");
        assert_eq!(plain.take_zeroed().unwrap().slot.as_ptr(), at_a);
    }

    #[test]
    fn slots_outlive_the_slab_handle_and_heap_slots_stand_in() {
        let slab = Slab::new(2, 1).unwrap();
        let mut slot = slab.take().unwrap();
        drop(slab);
        slot.fill(7);
        assert_eq!(&slot[..], &[7, 7]);
        let heap = Slot::heap(2);
        assert!(heap.is_heap() && !slot.is_heap());
        assert_eq!(&heap[..], &[0, 0]);
    }
}
