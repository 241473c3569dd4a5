use super::*;

#[test]
fn items_fold_skipped_shards_into_the_next_computed_one() {
    let items = items_of(10..20, |s| s != 12 && s != 13 && s != 17);
    assert_eq!(
        items,
        vec![
            Item {
                skipped: 10..12,
                shard: Some(12)
            },
            Item {
                skipped: 13..13,
                shard: Some(13)
            },
            Item {
                skipped: 14..17,
                shard: Some(17)
            },
            Item {
                skipped: 18..20,
                shard: None
            },
        ]
    );
    assert_eq!(items_of(0..3, |_| false).len(), 3);
    assert_eq!(
        items_of(0..3, |_| true),
        vec![Item {
            skipped: 0..3,
            shard: None
        }]
    );
}
