//! The sparse map's targets of the oriented kernel against every shard's
//! sources worked out one by one.

use crate::job::Job;
use crate::kernel::context::SearchContext;
use crate::puzzle::{parse_puzzle_with_file, Metric};
use crate::space::Space;

/// A `.tws` text as a job, with the space `cayley` plans.
fn job(name: &str, text: &str) -> Job {
    let spec = format!("tws:{}", name);
    Job::new(
        parse_puzzle_with_file(&spec, Metric::Mtm, Some(text)).expect("puzzle"),
        None,
    )
    .expect("job")
}

/// Every shard that reads shard `A` is among `A`'s targets: the map a
/// sparse level computes only those from may leave out no shard that can
/// gain a state.
#[test]
fn every_reader_of_a_shard_is_among_its_targets() {
    let puzzles = [
        ("cube.tws", cayley_tests::cube::cube_tws(2, "URFDLB")),
        ("pyraminx.tws", cayley_tests::pyraminx::pyraminx_tws()),
    ];
    for (options, text) in &puzzles {
        let job = job(options, text);
        assert!(
            matches!(job.space, Space::Oriented(_)),
            "{} is planned oriented",
            options
        );
        let ctx = SearchContext::new(job);
        let shards = ctx.job.space.shards();
        let targets: Vec<Vec<u64>> = (0..shards)
            .map(|a| ctx.target_shards(a).expect("the cube's moves are closed under undoing"))
            .collect();
        let mut reads = 0;
        for b in 0..shards {
            // A task also reads its own shard (the sparse map keeps every
            // non-empty shard as well): only the moves' sources count here.
            for a in ctx.source_shards(b).into_iter().filter(|&a| a != b) {
                reads += 1;
                assert!(
                    targets[a as usize].contains(&b),
                    "{}: shard {} reads {}, not among its targets {:?}",
                    options,
                    b,
                    a,
                    targets[a as usize]
                );
            }
        }
        assert!(reads > shards, "{}: {} reads in {} shards", options, reads, shards);
    }
}
