//! Free slots kept by the pool thread that freed them, for that thread's
//! next take.
//!
//! Why: every slot a worker takes or frees went through the slab's one
//! lock, a few times for every shard computed (its output, its union of
//! earlier levels, its loads), from every thread; and a slot freed by one
//! thread went to whichever took next, whose writes then pulled the
//! slot's lines over from the other core. On 2 threads of the 2-core AMD
//! VM the slab's functions took 0.7–1.3 % of a run of the 4×4 Loopover to
//! depth 8 against 0.35 % on 1 (`bench/device-perf.sh`, `THREADS=1`); with
//! stashes 0.6 %. That run at 2 threads, six interleaved pairs: 6.94–8.56
//! s (median 8.28) against 6.96–9.28 s (8.90); its depth 8 5.05–6.28 s
//! against 5.09–6.86 s. The gain is in this VM's slow rounds, where what
//! one core wrote costs the other more; in a fast pair, 6.94 against
//! 6.96 s. One thread: the same.
//!
//! A stash holds at most [`STASHED_PER_KIND`] slots of each kind (handed
//! back as they were, or zero). The slab hands out a thread's own first,
//! then the shared list's, then an untouched slot, and only then another
//! thread's: so a slab is exhausted only when every stash is empty too,
//! and at most `2 × STASHED_PER_KIND` slots per thread wait in stashes
//! while untouched ones are taken (the pages in use beyond one lock's
//! order: 8 slots a thread, 324 KiB on the 4×4 Loopover, 3.5 MiB on the
//! 2×6 unreduced).

use std::sync::{Mutex, MutexGuard};

/// Slots of each kind one thread keeps at most.
pub(super) const STASHED_PER_KIND: usize = 4;

/// Free slots by kind: a thread's stash, or the slab's shared lists.
#[derive(Default)]
pub(super) struct Lists {
    /// Handed back as they were, the most recently freed last.
    pub returned: Vec<u32>,
    /// Handed back all zero, the most recently freed last.
    pub zeroed: Vec<u32>,
}

impl Lists {
    /// Slots in both lists.
    pub fn len(&self) -> usize {
        self.returned.len() + self.zeroed.len()
    }

    /// The list of one kind.
    pub fn of(&mut self, zeroed: bool) -> &mut Vec<u32> {
        if zeroed {
            &mut self.zeroed
        } else {
            &mut self.returned
        }
    }
}

/// One thread's stash, on cache lines of its own: other threads touch it
/// only to take from it when nothing else is free.
#[derive(Default)]
#[repr(align(128))]
struct Stash {
    free: Mutex<Lists>,
}

/// A stash for each thread of a pool.
#[derive(Default)]
pub(super) struct Stashes {
    stashes: Box<[Stash]>,
}

impl Stashes {
    /// Stashes for the threads of a pool of `threads` (none for 0).
    pub fn new(threads: usize) -> Stashes {
        Stashes {
            stashes: (0..threads).map(|_| Stash::default()).collect(),
        }
    }

    /// The calling thread's stash: a pool thread's by its index in its
    /// pool (rayon), none for any other thread.
    pub fn own(&self) -> Option<MutexGuard<'_, Lists>> {
        let stash = self.stashes.get(rayon::current_thread_index()?)?;
        Some(lock(stash))
    }

    /// Keeps a freed slot in the calling thread's stash, if it has one with
    /// room for its kind; false otherwise (it goes to the shared list).
    pub fn keep(&self, index: u32, zeroed: bool) -> bool {
        let Some(mut own) = self.own() else {
            return false;
        };
        let list = own.of(zeroed);
        if list.len() >= STASHED_PER_KIND {
            return false;
        }
        list.push(index);
        true
    }

    /// A slot from any thread's stash, of the kind `zeroed_first` asks for
    /// first, with whether it is zero.
    pub fn take_any(&self, zeroed_first: bool) -> Option<(u32, bool)> {
        for kind in [zeroed_first, !zeroed_first] {
            for stash in self.stashes.iter() {
                if let Some(index) = lock(stash).of(kind).pop() {
                    return Some((index, kind));
                }
            }
        }
        None
    }

    /// Slots in every stash.
    pub fn len(&self) -> usize {
        self.stashes.iter().map(|stash| lock(stash).len()).sum()
    }
}

fn lock(stash: &Stash) -> MutexGuard<'_, Lists> {
    // A list is only ever pushed or popped whole: a panic elsewhere cannot
    // leave it half-changed.
    stash.free.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use crate::slab::{Slab, Slot};
    use std::sync::Mutex;

    /// Where a slot's words are.
    fn at(slot: &Slot) -> usize {
        slot.as_ptr() as usize
    }

    /// Runs `f` on pool thread `thread` alone, and waits for it.
    fn on(pool: &rayon::ThreadPool, thread: usize, f: impl Fn() + Sync) {
        pool.broadcast(|ctx| {
            if ctx.index() == thread {
                f()
            }
        });
    }

    #[test]
    fn a_thread_takes_back_what_it_freed_and_others_take_it_when_nothing_else_is_free() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let slab = Slab::for_pool(4, 3, 2).unwrap();
        let held: [Mutex<Vec<Slot>>; 2] = Default::default();
        on(&pool, 0, || {
            held[0]
                .lock()
                .unwrap()
                .extend([slab.take().unwrap(), slab.take().unwrap()])
        });
        on(&pool, 1, || held[1].lock().unwrap().push(slab.take().unwrap()));
        assert!(slab.take().is_none(), "three slots, all held");
        let first = at(&held[0].lock().unwrap()[0]);
        let other = at(&held[1].lock().unwrap()[0]);
        // Thread 0 frees one slot, then thread 1 another: each in its stash.
        on(&pool, 0, || drop(held[0].lock().unwrap().remove(0)));
        on(&pool, 1, || drop(held[1].lock().unwrap().pop()));
        assert_eq!(slab.free_slots(), 2, "stashed slots are free");
        // Thread 0 gets its own back, not the one freed last; then, with
        // nothing else free, thread 1's.
        on(&pool, 0, || {
            let own = slab.take().unwrap();
            assert_eq!(at(&own), first);
            let stolen = slab.take().unwrap();
            assert_eq!(at(&stolen), other);
            assert!(slab.take().is_none(), "every slot held again");
            held[0].lock().unwrap().extend([own, stolen]);
        });
        assert_eq!(slab.free_slots(), 0);
        // A thread outside the pool has no stash, but takes from them when
        // nothing else is free.
        on(&pool, 0, || drop(held[0].lock().unwrap().pop()));
        assert_eq!(at(&slab.take().unwrap()), other);
    }

    #[test]
    fn a_stash_holds_a_few_slots_of_each_kind_and_the_rest_go_to_the_shared_lists() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let slab = Slab::for_pool(4, 12, 2).unwrap();
        let held = Mutex::new(Vec::new());
        on(&pool, 0, || {
            let mut slots: Vec<Slot> = (0..10).map(|_| slab.take().unwrap()).collect();
            slots[9].fill(0);
            let zero = slots.pop().unwrap();
            let addresses: Vec<usize> = slots.iter().map(at).collect();
            // The first four freed stay here; the other five are shared.
            drop(slots);
            zero.release_zeroed();
            held.lock().unwrap().push(addresses);
        });
        let addresses = held.lock().unwrap().pop().unwrap();
        assert_eq!(slab.free_slots(), 12);
        on(&pool, 1, || {
            // The shared list's last freed, before an untouched slot.
            assert_eq!(at(&slab.take().unwrap()), addresses[8]);
        });
        on(&pool, 0, || {
            // Its own stash's, last in first out: the fourth freed; and a
            // zero slot from its stash without clearing.
            assert_eq!(at(&slab.take().unwrap()), addresses[3]);
            let zero = slab.take_zeroed().unwrap();
            assert!(zero.known_zero());
        });
    }
}
