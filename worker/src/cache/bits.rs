//! A shard's bits as the cache and the computation share them, and a
//! union of earlier levels taken out of the cache.

use super::LIST_ENTRY_BYTES;
use crate::slab::{Slot, ZeroSlot};
use std::sync::Arc;

/// A shard's bits, shared between the cache and the computation, with the
/// number of set bits (known from the chunk index, so nobody counts them)
/// and, for a sparse shard, their positions. A sparse shard may be held as
/// its list alone ([`Bits::list_only`]): its slot then goes back to the
/// slab, and the cache charges the list and its bookkeeping instead.
#[derive(Clone)]
pub struct Bits {
    held: Arc<Held>,
    count: u64,
}

/// What a [`Bits`] holds: its words, its list of positions, or both.
pub(super) struct Held {
    words: Option<Slot>,
    positions: Option<Box<[u32]>>,
    count: u64,
}

impl Drop for Held {
    /// Words whose set bits are known (listed, or none) go back to the
    /// slab cleared, for [`Slab::take_zeroed`].
    fn drop(&mut self) {
        let Some(words) = self.words.take() else {
            return;
        };
        match &self.positions {
            Some(positions) => words.release_cleared(positions),
            None if self.count == 0 => words.release_zeroed(),
            None => {}
        }
    }
}

impl Bits {
    /// Starts reading what the handle points to (its words' and list's
    /// places), which the kernel reads next.
    #[inline]
    pub fn prefetch(&self) {
        crate::prefetch::prefetch(Arc::as_ptr(&self.held));
    }

    /// `words` holding `count` set bits.
    pub fn new(words: Slot, count: u64) -> Bits {
        Bits::listed(words, count, None)
    }

    /// `words` holding `count` set bits, with their positions listed when
    /// there are at most `limit` (made here, by the thread that loaded or
    /// computed the shard, while its words are in that core's cache: see
    /// `SearchContext::position_limit`).
    pub fn with_positions(words: Slot, count: u64, limit: u64) -> Bits {
        Bits::with_listed_positions(words, count, limit, None)
    }

    /// [`Self::with_positions`] where `listed` may already hold the
    /// positions (those of a shard written as its list).
    pub fn with_listed_positions(words: Slot, count: u64, limit: u64, listed: Option<Vec<u32>>) -> Bits {
        let positions = (count > 0 && count <= limit).then(|| {
            listed
                .unwrap_or_else(|| cayley_shared::space::bits::positions(&words, count))
                .into_boxed_slice()
        });
        debug_assert!(positions
            .as_deref()
            .is_none_or(|p| p == cayley_shared::space::bits::positions(&words, count)));
        Bits::listed(words, count, positions)
    }

    fn listed(words: Slot, count: u64, positions: Option<Box<[u32]>>) -> Bits {
        debug_assert_eq!(cayley_shared::space::bits::popcount(&words), count);
        Bits {
            held: Arc::new(Held {
                words: Some(words),
                positions,
                count,
            }),
            count,
        }
    }

    /// The same bits without their words when they are listed and nobody
    /// else holds them: the slot goes back to the slab. A level of the 4×4
    /// Loopover's sparse depths is 499,961 slots of 40.5 KiB holding 7–82
    /// bits each on average, more than a budget of a few GiB has room for,
    /// so most of them were read again from the checkpoint at the next
    /// level, and every slot the level took was fresh memory to fault in.
    pub fn list_only(self) -> Bits {
        if self.held.positions.is_none() {
            return self;
        }
        match Arc::try_unwrap(self.held) {
            Ok(mut held) => {
                let positions = held.positions.take();
                if let (Some(words), Some(listed)) = (held.words.take(), &positions) {
                    words.release_cleared(listed);
                }
                Bits {
                    held: Arc::new(Held {
                        words: None,
                        positions,
                        count: self.count,
                    }),
                    count: self.count,
                }
            }
            Err(held) => Bits {
                held,
                count: self.count,
            },
        }
    }

    /// The positions of the set bits, when listed.
    pub fn positions(&self) -> Option<&[u32]> {
        self.held.positions.as_deref()
    }

    /// The words, unless held as a list only.
    pub fn words(&self) -> Option<&[u64]> {
        self.held.words.as_deref()
    }

    /// Writes the bits into `into`, a shard's words of any contents.
    pub fn write_into(&self, into: &mut [u64]) {
        match (self.words(), self.positions()) {
            (Some(words), _) => into.copy_from_slice(words),
            (None, Some(_)) => {
                into.fill(0);
                self.set_into_zeroed(into);
            }
            (None, None) => unreachable!("bits hold their words or their list"),
        }
    }

    /// Sets these bits, listed, in `into`, which is all zero.
    pub fn set_into_zeroed(&self, into: &mut [u64]) {
        let positions = self.positions().expect("bits held as their list");
        cayley_shared::space::bits::set_positions(into, positions);
    }

    /// These bits as a union taken out of `cache`: its words, or a buffer
    /// of the cache's to lay them into: a zeroed one for a list, where only
    /// its bits are set, or one to copy them into while another holder
    /// shares them.
    pub(super) fn into_seen(self, cache: &mut super::ShardCache) -> Seen {
        let count = self.count;
        match Arc::try_unwrap(self.held) {
            Ok(mut held) if held.words.is_some() => Seen::Words(held.words.take().expect("checked")),
            Ok(listed) => Seen::Listed {
                into: cache.zero_buffer(),
                from: Bits {
                    held: Arc::new(listed),
                    count,
                },
            },
            Err(held) => Seen::Copy {
                into: cache.buffer(),
                from: Bits { held, count },
            },
        }
    }

    /// Bytes the cache charges for these bits: a shard's `shard_bytes`, or
    /// for a list only [`LIST_ENTRY_BYTES`], and the list.
    pub(super) fn bytes(&self, shard_bytes: u64) -> u64 {
        let words = if self.held.words.is_some() {
            shard_bytes
        } else {
            LIST_ENTRY_BYTES
        };
        words + self.positions().map_or(0, |p| p.len() as u64 * 4)
    }

    /// Set bits.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when someone besides the cache holds these bits.
    pub(super) fn in_use(&self) -> bool {
        Arc::strong_count(&self.held) > 1
    }
}

/// A union of earlier levels taken out of the cache. Its words are made
/// by [`Seen::into_words`], after the caller lets go of the cache's lock:
/// zeroing or copying a shard there held up every other thread (on 16
/// threads, a fresh slot's first write also faults its pages in).
pub enum Seen {
    /// The union itself.
    Words(Slot),
    /// An empty union: a buffer to be zeroed where it may not be.
    Empty(ZeroSlot),
    /// A union held as a list only: `from`, to be set in `into`.
    Listed { into: ZeroSlot, from: Bits },
    /// A union another holder still shares: `from`, to be written `into`.
    Copy { into: Slot, from: Bits },
}

/// What is known of a union's set bits once laid out as words.
pub enum SeenList {
    /// Nothing: they are counted from the words.
    Unknown,
    /// None is set.
    Empty,
    /// Those of these bits, where they are listed.
    Of(Bits),
}

impl SeenList {
    /// The positions of the set bits, when known.
    pub fn positions(&self) -> Option<&[u32]> {
        match self {
            SeenList::Unknown => None,
            SeenList::Empty => Some(&[]),
            SeenList::Of(bits) => bits.positions(),
        }
    }
}

impl Seen {
    /// The union's words (zeroing or writing them first where needed).
    pub fn into_words(self) -> Slot {
        self.into_listed_words().0
    }

    /// The union's words, and its set bits where a list or emptiness says
    /// them: the next level's union is then counted and listed by merging
    /// lists, not by reading a shard's words twice (on the 4×4 Loopover's
    /// sparse levels, 41 KiB a shard for a few dozen bits).
    pub fn into_listed_words(self) -> (Slot, SeenList) {
        match self {
            Seen::Words(words) => (words, SeenList::Unknown),
            Seen::Empty(words) => (words.into_zeroed(), SeenList::Empty),
            Seen::Listed { into, from } => {
                let mut into = into.into_zeroed();
                from.set_into_zeroed(&mut into);
                (into, SeenList::Of(from))
            }
            Seen::Copy { mut into, from } => {
                from.write_into(&mut into);
                (into, SeenList::Of(from))
            }
        }
    }
}
