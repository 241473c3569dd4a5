//! Leases say when the level they write is the job's last (`--max-depth`),
//! so that a worker keeps none of it for a next level.

use super::*;

#[test]
fn only_the_leases_of_the_max_depth_say_last_and_the_table_is_the_published_one() {
    let mut h = harness(KeepLevels::All);
    let max_depth = 4;
    h.state.manifest.max_depth = Some(max_depth);
    let mut said = Vec::new();
    while h.state.phase == Phase::Running {
        let task = h.lease(1);
        said.push((task.from_level + 1, task.last_level));
        let done = h.compute(&task);
        assert_eq!(h.state.complete(1, task.lease_id, done), Verdict::Accepted);
    }
    assert_eq!(h.state.phase, Phase::Finished);
    assert_eq!(h.depths(), published_2x4()[..=max_depth as usize]);
    assert!(said.iter().any(|&(level, _)| level == max_depth), "{:?}", said);
    for (level, last) in said {
        assert_eq!(last, level == max_depth, "a lease writing level {}", level);
    }
}
