use super::*;

const WORDS: usize = 4;
const BYTES: u64 = WORDS as u64 * 8;

/// A cache of `shards` shards' budget over a slab of `slots` slots.
fn cache(shards: u64, slots: usize) -> ShardCache {
    ShardCache::new(shards * BYTES, BYTES, Slab::new(WORDS, slots).unwrap())
}

fn load(v: u64) -> impl FnOnce(Slot) -> Result<(Slot, u64, u64), ()> {
    move |mut buffer| {
        buffer.fill(v);
        let count = u64::from(v.count_ones()) * WORDS as u64;
        Ok((buffer, count, 10))
    }
}

/// Offers `words` as the union below `below` of `shard`, counted.
fn offer_seen(cache: &mut ShardCache, below: u32, shard: u64, words: Slot) {
    let count = cayley_shared::space::bits::popcount(&words);
    cache.offer_seen(below, shard, Bits::new(words, count));
}

fn filled(cache: &mut ShardCache, v: u64) -> Slot {
    let mut slot = cache.buffer();
    slot.fill(v);
    slot
}

#[test]
fn stays_within_budget_and_evicts_least_recently_used() {
    let mut cache = cache(3, 8);
    let mut stats = CacheStats::default();
    for s in 0..3 {
        cache.get((1, s), &mut stats, load(s)).unwrap();
    }
    cache.get((1, 0), &mut stats, load(0)).unwrap(); // 0 is now the most recent
    cache.get((1, 3), &mut stats, load(3)).unwrap(); // evicts 1, the least recent
    assert_eq!(cache.len(), 3);
    assert!(cache.used() <= 3 * BYTES);
    let before = stats;
    cache.get((1, 0), &mut stats, load(0)).unwrap();
    cache.get((1, 1), &mut stats, load(1)).unwrap();
    assert_eq!(stats.hits - before.hits, 1, "0 was kept, 1 was evicted");
    assert_eq!(stats.bytes_read - before.bytes_read, 10);
    assert_eq!(cache.peak, 3 * BYTES);
    assert_eq!(cache.overflow, 0);
}

#[test]
fn shards_in_use_are_not_evicted_and_overflow_is_not_kept() {
    let mut cache = cache(2, 8);
    let mut stats = CacheStats::default();
    let a = cache.get((1, 0), &mut stats, load(0)).unwrap();
    let b = cache.get((1, 1), &mut stats, load(1)).unwrap();
    let c = cache.get((1, 2), &mut stats, load(2)).unwrap();
    assert_eq!(c.words(), Some(&[2; WORDS][..]));
    assert_eq!(c.count(), WORDS as u64);
    assert_eq!(cache.len(), 2, "nothing evictable: the third is returned, not kept");
    drop((a, b));
    cache.get((1, 3), &mut stats, load(3)).unwrap();
    assert_eq!(cache.len(), 2);
    assert!(cache.used() <= 2 * BYTES);
}

#[test]
fn an_exhausted_slab_takes_a_cached_slot_then_falls_back_to_the_heap() {
    let mut cache = cache(2, 2);
    let mut stats = CacheStats::default();
    cache.get((1, 0), &mut stats, load(0)).unwrap();
    let held = cache.get((1, 1), &mut stats, load(1)).unwrap();
    let slot = cache.buffer();
    assert!(!slot.is_heap(), "shard 0 gave up its slot");
    assert_eq!(cache.len(), 1);
    let extra = cache.buffer();
    assert!(extra.is_heap(), "every slot is in use");
    assert_eq!(cache.overflow, 1);
    drop((held, slot, extra));
}

#[test]
fn own_outputs_only_take_free_room_and_go_first() {
    let mut cache = cache(3, 8);
    let mut stats = CacheStats::default();
    cache.get((1, 0), &mut stats, load(0)).unwrap();
    let out = filled(&mut cache, 9);
    assert!(cache.offer((2, 9), Bits::new(out, 2 * WORDS as u64)));
    cache.get((1, 1), &mut stats, load(1)).unwrap();
    cache.get((1, 2), &mut stats, load(2)).unwrap(); // full: the offered shard goes first
    assert!(!cache.entries.contains_key(&(2, 9)));
    let out = filled(&mut cache, 8);
    assert!(
        !cache.offer((2, 8), Bits::new(out, WORDS as u64)),
        "no room, nothing evicted for it"
    );
    cache.drop_levels_below(2);
    assert!(cache.is_empty());
    assert_eq!(cache.used(), 0);
}

#[test]
fn seen_unions_are_taken_once_and_dropped_with_their_level() {
    let mut cache = cache(3, 8);
    let mut stats = CacheStats::default();
    let seen = filled(&mut cache, 7);
    offer_seen(&mut cache, 3, 5, seen);
    let seen = filled(&mut cache, 8);
    offer_seen(&mut cache, 4, 5, seen);
    assert_eq!(
        cache.take_seen(3, 5).map(|s| s.into_words().to_vec()),
        Some(vec![7; WORDS])
    );
    assert!(cache.take_seen(3, 5).is_none(), "taken out");
    assert!(cache.take_seen(3, 6).is_none());
    cache.get((3, 1), &mut stats, load(1)).unwrap();
    cache.drop_levels_below(3); // tasks of level 4 on: (3, _) stays
    assert_eq!(cache.len(), 2);
    cache.drop_levels_below(4);
    assert!(cache.is_empty());
    assert_eq!(cache.used(), 0);
}

#[test]
fn empty_unions_take_no_room_and_carry_over() {
    let mut cache = cache(1, 8);
    for (shard, v) in [(5, 0), (700, 0), (6, 1)] {
        let seen = filled(&mut cache, v);
        offer_seen(&mut cache, 3, shard, seen);
    }
    assert_eq!(cache.used(), BYTES, "only the non-empty union takes room");
    let seen = filled(&mut cache, 2);
    offer_seen(&mut cache, 3, 7, seen);
    assert!(cache.take_seen(3, 7).is_none(), "no room for a second one");
    assert_eq!(
        cache.take_seen(3, 5).map(|s| s.into_words().to_vec()),
        Some(vec![0; WORDS])
    );
    assert!(cache.take_seen(3, 5).is_none(), "taken out");
    cache.carry_seen(3, 700);
    cache.carry_seen(3, 6);
    assert!(cache.take_seen(3, 700).is_none());
    assert_eq!(
        cache.take_seen(4, 700).map(|s| s.into_words().to_vec()),
        Some(vec![0; WORDS])
    );
    assert_eq!(
        cache.take_seen(4, 6).map(|s| s.into_words().to_vec()),
        Some(vec![1; WORDS])
    );
    let seen = filled(&mut cache, 0);
    offer_seen(&mut cache, 4, 9, seen);
    cache.drop_levels_below(4);
    assert!(cache.take_seen(4, 9).is_none(), "dropped with its level");
}

/// Every shard a level's sparse map passes over keeps its union for the
/// next level, whether or not a task visits it: empty below level 0, its
/// mark or its buffer after. Before, a shard of a chunk no task ran for
/// (the coordinator records those empty) had none for the rest of the
/// search, and its bottom-up levels probed every state of depth `d - 3`
/// and less (the 3×3×3 edges' depth 13 with a sparse map: 32.0 → 96.8 s).
#[test]
fn shards_a_sparse_map_passes_over_keep_their_unions() {
    let mut cache = cache(2, 8);
    // Shards 0..130 of which 3 and 70 gain states at level 0 and 1.
    let mut targets = vec![0u64; 3];
    targets[0] |= 1 << 3;
    targets[1] |= 1 << (70 - 64);
    let empty = |cache: &mut ShardCache, below, shard| cache.take_seen(below, shard).map(|s| s.into_words().to_vec());
    cache.carry_seen_past(0, &targets, (0..130).step_by(2));
    assert_eq!(empty(&mut cache, 1, 4), Some(vec![0; WORDS]), "empty below level 0");
    assert_eq!(
        empty(&mut cache, 1, 128),
        Some(vec![0; WORDS]),
        "past the map's last word"
    );
    assert!(empty(&mut cache, 1, 5).is_none(), "another cache's shard");
    assert!(empty(&mut cache, 1, 70).is_none(), "a target is computed, not carried");
    assert_eq!(cache.used(), 0, "marks, not buffers");
    // Level 1: 70's union is non-empty, 6's empty; neither gains states.
    let seen = filled(&mut cache, 5);
    offer_seen(&mut cache, 2, 70, seen);
    cache.carry_seen_past(1, &[1 << 3, 0, 0], (0..130).step_by(2));
    cache.carry_seen_past(2, &[1 << 3, 0, 0], (0..130).step_by(2));
    assert_eq!(empty(&mut cache, 3, 6), Some(vec![0; WORDS]));
    assert_eq!(empty(&mut cache, 3, 70), Some(vec![5; WORDS]), "carried twice");
    assert!(
        empty(&mut cache, 3, 2).is_some() && empty(&mut cache, 3, 2).is_none(),
        "taken once"
    );
}

#[test]
fn evicted_slots_serve_the_next_loads() {
    let mut cache = cache(2, 2);
    let mut stats = CacheStats::default();
    let first = cache.get((1, 0), &mut stats, load(7)).unwrap();
    let address = first.words().unwrap().as_ptr();
    drop(first);
    cache.remove((1, 0));
    // The next miss loads into the freed slot, stale words and all.
    let mut seen = Vec::new();
    let again = cache
        .get((1, 1), &mut stats, |buffer| {
            seen = buffer.to_vec();
            load(9)(buffer)
        })
        .unwrap();
    assert_eq!(again.words().unwrap().as_ptr(), address);
    assert_eq!(seen, vec![7; WORDS]);
    assert_eq!(again.words(), Some(&[9; WORDS][..]));
}

/// Hits and misses over a long random sequence of lookups are those of a
/// plain least-recently-used list: hits only note their tick, and eviction
/// refiles entries used since they were filed (`ShardCache::evict_one`).
#[test]
fn lazy_refiling_evicts_as_a_plain_lru_list_does() {
    let capacity = 4;
    let mut cache = cache(capacity as u64, 16);
    let mut stats = CacheStats::default();
    let mut reference: Vec<u64> = Vec::new(); // least recent first
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..5000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let shard = x % 9;
        let hits = stats.hits;
        cache.get((1, shard), &mut stats, load(shard)).unwrap();
        let hit = stats.hits > hits;
        let position = reference.iter().position(|&s| s == shard);
        assert_eq!(hit, position.is_some(), "shard {}", shard);
        match position {
            Some(i) => {
                reference.remove(i);
            }
            None if reference.len() == capacity => {
                reference.remove(0);
            }
            None => {}
        }
        reference.push(shard);
    }
}

/// `F_{d-1}(B)` is read only by the task of `B`, and only when that task
/// has no union of the earlier levels: where the union is held, the level
/// below goes at the level's start; elsewhere it stays.
#[test]
fn the_level_below_goes_where_a_union_covers_it() {
    let mut cache = cache(8, 8);
    let mut stats = CacheStats::default();
    for shard in 0..3 {
        cache.get((4, shard), &mut stats, load(shard + 1)).unwrap();
    }
    let union = filled(&mut cache, 7);
    offer_seen(&mut cache, 5, 1, union);
    // A union for another level covers nothing here.
    let other = filled(&mut cache, 7);
    offer_seen(&mut cache, 4, 2, other);
    assert_eq!(cache.drop_covered(5), 1);
    let before = stats;
    cache.get((4, 0), &mut stats, load(1)).unwrap();
    cache.get((4, 2), &mut stats, load(3)).unwrap();
    assert_eq!(stats.hits - before.hits, 2, "shards 0 and 2 have no union below 5");
    cache.get((4, 1), &mut stats, load(2)).unwrap();
    assert_eq!(stats.hits - before.hits, 2, "shard 1 was read again");
    assert!(cache.take_seen(5, 1).is_some(), "the union itself stays");
    assert_eq!(cache.drop_covered(0), 0);
}

#[test]
fn a_listed_shard_is_charged_its_positions_and_the_budget_holds() {
    // Budget: three shards of 32 bytes. A shard with one bit in each of
    // its 4 words, listed, is 32 + 16 bytes: two of them fill 96 bytes.
    let mut cache = cache(3, 8);
    let listed = |cache: &mut ShardCache| Bits::with_positions(filled(cache, 1), WORDS as u64, WORDS as u64);
    let a = listed(&mut cache);
    assert_eq!(a.positions(), Some(&[0, 64, 128, 192][..]), "the set bits, in order");
    cache.admit((1, 0), a);
    assert_eq!(cache.used(), BYTES + 16);
    let b = listed(&mut cache);
    cache.admit((1, 1), b);
    assert_eq!(cache.used(), 2 * BYTES + 32);
    // A third listed shard does not fit beside them: the least recent goes.
    let c = listed(&mut cache);
    cache.admit((1, 2), c);
    assert_eq!(cache.len(), 2);
    assert!(cache.lookup((1, 0)).is_none(), "evicted to make room for the list");
    assert_eq!(cache.used(), 2 * BYTES + 32);
    // An own output with a list is not offered into room it does not fit.
    let d = listed(&mut cache);
    assert!(!cache.offer((1, 3), d), "48 bytes do not fit in the 0 left");
    // Removing a listed shard gives back all it was charged.
    cache.remove((1, 1));
    cache.remove((1, 2));
    assert_eq!(cache.used(), 0);
    // Over the limit, or empty, nothing is listed.
    assert!(Bits::with_positions(filled(&mut cache, 1), WORDS as u64, 3)
        .positions()
        .is_none());
    assert!(Bits::with_positions(filled(&mut cache, 0), 0, 3).positions().is_none());
}

#[test]
fn a_shard_held_as_its_list_gives_back_its_slot_and_is_charged_the_list() {
    // Room for two whole shards and one of three bits held as a list.
    let list_charge = LIST_ENTRY_BYTES + 12;
    let mut cache = ShardCache::new(2 * BYTES + list_charge, BYTES, Slab::new(WORDS, 8).unwrap());
    let slab_free = |cache: &ShardCache| cache.slab.free_slots();
    let free = slab_free(&cache);
    let mut words = filled(&mut cache, 0);
    words[1] = 0b101;
    words[3] = 1 << 63;
    let listed = Bits::with_positions(words, 3, 4);
    assert_eq!(slab_free(&cache), free - 1);
    let kept = listed.clone();
    let still_shared = kept.list_only();
    assert!(still_shared.words().is_some(), "another holder keeps the words");
    drop(listed);
    let only = still_shared.list_only();
    assert!(only.words().is_none());
    assert_eq!(slab_free(&cache), free, "the slot went back to the slab");
    assert_eq!(only.positions(), Some(&[64, 66, 255][..]));
    let mut laid = vec![7; WORDS];
    only.write_into(&mut laid);
    assert_eq!(laid, vec![0, 0b101, 0, 1 << 63], "laid out again from the list");
    cache.admit((1, 0), only.clone());
    assert_eq!(cache.used(), list_charge);
    let whole = |cache: &mut ShardCache| Bits::new(filled(cache, 3), 2 * WORDS as u64);
    for shard in 2..4 {
        let b = whole(&mut cache);
        cache.admit((1, shard), b);
    }
    assert_eq!(cache.used(), 2 * BYTES + list_charge, "full");
    // The least recent, the list, is in use: the next whole shard evicts
    // the one after it.
    let b = whole(&mut cache);
    cache.admit((1, 4), b);
    assert_eq!(cache.len(), 3);
    drop(only);
    let b = whole(&mut cache);
    cache.admit((1, 5), b);
    assert_eq!(cache.used(), 3 * BYTES, "the list went once nobody held it");
    assert!(cache.lookup((1, 0)).is_none());
    assert!(cache.lookup((1, 2)).is_none(), "evicted while the list was in use");
    // A union held as a list comes back as its words.
    cache.remove((1, 3));
    let mut union = filled(&mut cache, 0);
    union[2] = 1 << 5;
    cache.offer_seen(4, 9, Bits::with_positions(union, 1, 4).list_only());
    assert_eq!(cache.used(), 2 * BYTES + LIST_ENTRY_BYTES + 4);
    let words = cache.take_seen(4, 9).map(|s| s.into_words().to_vec());
    assert_eq!(words, Some(vec![0, 0, 1 << 5, 0]));
}

#[test]
fn bits_whose_set_bits_are_known_give_back_their_slot_cleared() {
    let slab = Slab::new(WORDS, 1).unwrap();
    let mut words = slab.take().unwrap();
    words.fill(0);
    words[2] = 1 << 5 | 1 << 7;
    let at = words.as_ptr();
    // Held as its list only: the slot goes back at once, its two words'
    // bits cleared.
    let listed = Bits::with_positions(words, 2, 64).list_only();
    assert_eq!(listed.positions(), Some(&[133, 135][..]));
    let zero = slab.take_zeroed().unwrap();
    assert!(zero.known_zero());
    let mut words = zero.into_zeroed();
    assert_eq!((words.as_ptr(), &words[..]), (at, &[0; WORDS][..]));
    // Dropped with its words and its list, and with no bit set at all.
    words[1] = 1;
    drop(Bits::with_positions(words, 1, 64));
    let words = slab.take_zeroed().unwrap();
    assert!(words.known_zero());
    drop(Bits::new(words.into_zeroed(), 0));
    assert!(slab.take_zeroed().unwrap().known_zero());
    // Dense bits (no list) go back as they are, to be cleared.
    let mut words = slab.take().unwrap();
    words.fill(u64::MAX);
    drop(Bits::with_positions(words, 256, 64));
    let dirty = slab.take_zeroed().unwrap();
    assert!(!dirty.known_zero());
    assert_eq!(&dirty.into_zeroed()[..], &[0; WORDS]);
}
