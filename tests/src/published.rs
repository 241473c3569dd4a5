//! The published distance tables in `tests/data/*.csv`, the one loader for
//! every test that checks a table against them: this crate's end-to-end
//! tests and, as a dev-dependency, the coordinator's. Each file names its
//! sources in `#` lines; a table is one line `name,c0 c1 c2 …`, states at
//! depth 0, 1, 2, ….

use std::path::Path;

/// The table `name` of `tests/data/FILE`; panics naming the file when it
/// has no such table (a typo in a test, not a condition to handle).
pub fn published_table(file: &str, name: &str) -> Vec<u64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let line = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(','))
        .unwrap_or_else(|| panic!("no table {} in {}", name, path.display()));
    line.split_whitespace()
        .map(|c| {
            c.parse()
                .unwrap_or_else(|_| panic!("{}: {:?} is not a count", path.display(), c))
        })
        .collect()
}

/// The published Loopover MTM table of `board` (`2x5`),
/// `tests/data/loopover-mtm.csv`.
pub fn published_loopover_mtm(board: &str) -> Vec<u64> {
    published_table("loopover-mtm.csv", board)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_found_by_its_whole_name() {
        // "2x2" must not match the line of a board whose name starts alike.
        assert_eq!(published_loopover_mtm("2x2"), vec![1, 4, 10, 8, 1]);
        // 3x3: every move is a 3-cycle, an even permutation, and the even
        // ones are all reached: 9!/2 states.
        assert_eq!(published_loopover_mtm("3x3").iter().sum::<u64>(), 181_440);
    }
}
