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
//! first), and the process's shard memory is at most the map's size, on
//! any allocator.

use memmap2::{MmapMut, MmapOptions};
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
}

/// The free slots without a list entry per slot: slots past `untouched`
/// were never handed out. A list of every slot cost 4 bytes a slot, and a
/// tiny puzzle's one-word shards made that 6 GB and 4 s for a 12 GB
/// budget (`cayley run loopover:2x2`).
#[derive(Default)]
struct FreeSlots {
    returned: Vec<u32>,
    untouched: u32,
}

// SAFETY: `base` points into the mapping `_map` owns, which lives exactly
// as long as `Inner`; the only access to its memory is through `Slot`s, and
// each slot index is owned by at most one `Slot` at a time (the free list
// hands an index out once until its `Slot` is dropped), so sharing `Inner`
// between threads shares no memory two threads can both write.
unsafe impl Send for Inner {}
// SAFETY: as above; the free list itself is behind a mutex.
unsafe impl Sync for Inner {}

impl Slab {
    /// A slab of `slots` slots of `slot_words` words. The memory is
    /// reserved, not touched: pages become resident as slots are first used.
    pub fn new(slot_words: usize, slots: usize) -> std::io::Result<Slab> {
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
            }),
        })
    }

    /// A free slot (of unspecified contents), if any.
    pub fn take(&self) -> Option<Slot> {
        let index = {
            let mut free = self.inner.lock();
            match free.returned.pop() {
                Some(index) => index,
                None if (free.untouched as usize) < self.inner.slots => {
                    free.untouched += 1;
                    free.untouched - 1
                }
                None => return None,
            }
        };
        Some(Slot {
            backing: Backing::Slab {
                inner: self.inner.clone(),
                index,
            },
        })
    }

    /// Slots of the slab.
    pub fn slots(&self) -> usize {
        self.inner.slots
    }

    /// Slots not handed out.
    pub fn free_slots(&self) -> usize {
        let free = self.inner.lock();
        free.returned.len() + self.inner.slots - free.untouched as usize
    }

    /// Slots ever handed out: the slab's resident part, since a freed slot
    /// is handed out again before an untouched one.
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
    Slab { inner: Arc<Inner>, index: u32 },
    Heap(Box<[u64]>),
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
            Backing::Slab { inner, index } => unsafe {
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
            Backing::Slab { inner, index } => unsafe {
                std::slice::from_raw_parts_mut(inner.base.add(*index as usize * inner.slot_words), inner.slot_words)
            },
            Backing::Heap(words) => words,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Backing::Slab { inner, index } = &self.backing {
            inner.lock().returned.push(*index);
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
