//! The checkpoint disk a `--max-depth` run plans bounds what it writes:
//! each level's chunk files (`result.json`'s `file_bytes`, the manifest's
//! sum of the files' sizes) within the level's bound
//! (`cayley_shared::search::resources::DepthBound`: the canonical words of
//! its length, over the states a stored bit stands for), on every kind of
//! space: reduced and sparse, unreduced and dense, coded, oriented, and
//! guarded moves.

use cayley_shared::files::checkpoint::KeepLevels;
use cayley_shared::search::resources::requirements;
use cayley_tests::run::run_quietly;
use std::path::Path;

fn sample(file: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    format!("tws:{}", root.join("tests/data/puzzles").join(file).display())
}

#[test]
fn every_level_is_within_its_planned_bytes() {
    let commands = [
        "loopover:4x4 --max-depth 7".to_string(),
        "loopover:2x6 --no-symmetry".to_string(),
        "loopover:3x4 --track 1-5".to_string(),
        "sliding:3x3".to_string(),
        "varikon".to_string(),
        sample("2x2x2.tws"),
    ];
    for command in commands {
        let run = run_quietly(&command);
        let levels = &run.result.level_io;
        let depth = levels.len() as u32 - 1;
        let needs = requirements(&run.job);
        let bound = needs.depth_bound.levels_to(depth);
        for (k, (level, &most)) in levels.iter().zip(&bound).enumerate() {
            assert!(
                level.file_bytes as u128 <= most,
                "{command}: depth {k} wrote {} bytes, bound {most}",
                level.file_bytes
            );
        }
        // The check of `--keep-levels all` asks for their sum, unless the
        // whole table's estimate (four raw levels) is less.
        let written: u128 = levels.iter().map(|l| l.file_bytes as u128).sum();
        let sum: u128 = bound.iter().sum();
        let planned = needs.disk_bytes_to(KeepLevels::All, Some(depth));
        assert_eq!(planned, sum.min(needs.disk_bytes(KeepLevels::All)), "{command}");
        assert!(written <= sum, "{command}: {written} bytes written, {sum} planned");
    }
}
