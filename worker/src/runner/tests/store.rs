//! The cache's stripes and open files (`runner/store.rs`).

use crate::runner::store::{Held, Store};
use crate::slab::Slab;

/// Every shard of a range is visited once, with its own stripe held,
/// for ranges shorter and longer than the stripes, from any start.
#[test]
fn each_held_in_visits_each_shard_once_in_its_stripe() {
    // Four threads, room for 131,072 shards: 16 stripes.
    let store = Store::new(1 << 20, 8, Slab::new(1, 16).unwrap(), 4);
    let mut stripes = std::collections::HashSet::new();
    for range in [0..0, 5..6, 3..18, 7..90, 0..1000] {
        let mut seen = Vec::new();
        store.each_held_in(range.clone(), |held, shard| seen.push((shard, held as *const Held)));
        seen.sort_unstable_by_key(|&(shard, _)| shard);
        let shards: Vec<u64> = seen.iter().map(|&(shard, _)| shard).collect();
        assert_eq!(shards, range.clone().collect::<Vec<_>>());
        for (shard, held) in seen {
            assert_eq!(held, &*store.lock(shard) as *const Held, "shard {shard}");
            stripes.insert(held);
        }
    }
    assert_eq!(stripes.len(), 16);
}
