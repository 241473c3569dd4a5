//! Checkpoints end to end (docs/ARCHITECTURE.md, "Crash model"): real `cayley` processes killed and
//! resumed, refused, and the result folder (damaged files and a full disk:
//! `damaged_checkpoints.rs`).
//!
//! Every table is compared with Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv; everything else is checked against
//! identities (counts add up, words replay to solved), never against an
//! earlier output of this program.

use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use cayley_shared::search::resources::requirements;
use cayley_tests::checkpoint::*;
use cayley_tests::{cayley, read_json, write_json};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Duration;

#[test]
fn killed_runs_resume_to_the_published_table() {
    // In memory (fast), and the first seed once more on a disk, where the
    // fsyncs and renames a kill interrupts reach a real filesystem.
    let runs = (1..=5u64).map(|seed| (seed, dirs())).chain([(1, dirs_on_disk())]);
    for (seed, d) in runs {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let keep = match seed {
            5 => "every:3",
            s if s % 2 == 0 => "all",
            _ => "last2",
        };
        // Unreduced: 90 shards in 18 chunk files of 5; reduced: 26 classes.
        let run = if seed <= 2 || seed == 5 {
            d.run_args(&["--shard-pieces", "2", "--keep-levels", keep])
        } else {
            d.reduced_run_args(&["--keep-levels", keep])
        };
        let first = rng.random_range(1..=9);
        kill_after_level(&run, &d.ck, first, rng.random_range(0..80));
        assert_manifest_consistent(&d.ck);
        // Every other seed kills the resumed process once more.
        if seed % 2 == 1 {
            let again = levels_done(&d.ck).max(first + 1);
            kill_after_level(&d.resume_args(), &d.ck, again, rng.random_range(0..80));
            assert_manifest_consistent(&d.ck);
        }
        assert_success(&d.resume());
        assert_published(&d.out);
        assert_manifest_consistent(&d.ck);
    }
}

#[test]
fn resuming_a_finished_job_only_rewrites_the_results() {
    let d = dirs();
    assert_success(&d.run(&["--shard-pieces", "1"]));
    assert_published(&d.out);
    let manifest = std::fs::read(d.ck.join("manifest.json")).unwrap();
    let level_file = d.chunk(5, 0);
    let level_bytes = std::fs::read(&level_file).unwrap();
    let modified = std::fs::metadata(&level_file).unwrap().modified().unwrap();
    std::fs::remove_dir_all(&d.out).unwrap();
    let started = std::time::Instant::now();
    assert_success(&d.resume());
    assert_published(&d.out);
    for name in ["depths.csv", "depths.svg", "antipodes.txt"] {
        assert!(d.out.join(name).exists(), "{} not rewritten", name);
    }
    assert_eq!(std::fs::read(d.ck.join("manifest.json")).unwrap(), manifest);
    assert_eq!(std::fs::read(&level_file).unwrap(), level_bytes);
    assert_eq!(std::fs::metadata(&level_file).unwrap().modified().unwrap(), modified);
    // Nothing to compute: rewriting a few files must not wait for anything.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "rewriting the results took {:?}", took);
}

#[test]
fn resume_refuses_another_format_version() {
    let d = dirs();
    d.run_until_disk_full(4, 0, &[]);
    let mut m = d.manifest();
    m["format_version"] = 999.into();
    write_json(&d.ck.join("manifest.json"), &m);
    assert_refused(&d.resume(), "format version 999");
    assert!(!d.out.join("result.json").exists());
}

#[test]
fn resume_refuses_a_checkpoint_of_another_job() {
    // An edited fingerprint.
    let d = dirs();
    d.run_until_disk_full(4, 0, &[]);
    let mut m = d.manifest();
    m["fingerprint"] = "0123456789abcdef".into();
    write_json(&d.ck.join("manifest.json"), &m);
    assert_refused(&d.resume(), "another job");

    // A manifest copied from another job's checkpoint (STM): it is
    // self-consistent, but the level files around it are not its own. The
    // refusal must not touch them.
    let d = dirs();
    d.run_until_disk_full(4, 0, &[]);
    let other = dirs();
    other.run_until_disk_full(4, 0, &["--metric", "stm"]);
    std::fs::copy(other.ck.join("manifest.json"), d.ck.join("manifest.json")).unwrap();
    let before = std::fs::read(d.chunk(3, 0)).unwrap();
    assert_refused(&d.resume(), "another job");
    assert_eq!(std::fs::read(d.chunk(3, 0)).unwrap(), before);
    assert!(!d.out.join("result.json").exists());
}

#[test]
fn run_refuses_a_directory_that_holds_a_checkpoint() {
    let d = dirs();
    d.run_until_disk_full(3, 0, &[]);
    let manifest = std::fs::read(d.ck.join("manifest.json")).unwrap();
    for metric in ["mtm", "stm"] {
        assert_refused(&d.run(&["--metric", metric]), "already holds a checkpoint");
    }
    assert_eq!(std::fs::read(d.ck.join("manifest.json")).unwrap(), manifest);
    assert_success(&d.resume());
    assert_published(&d.out);
}

fn level_dirs(ck: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ck.join("levels"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Levels 1..=t whose files together take at most 1/8 of a raw level of
/// `job` (README, `--keep-levels last2`), from the sizes the manifest records.
fn early_levels_last2_keeps(ck: &Path, job: &Job) -> u32 {
    let m = read_json(&ck.join("manifest.json")).unwrap();
    let raw = requirements(job).level_bytes;
    let mut early = 0u128;
    let mut t = 0;
    for (depth, level) in m["levels"].as_array().unwrap().iter().enumerate().skip(1) {
        early += level["bytes"].as_u64().unwrap() as u128;
        if early * 8 > raw {
            break;
        }
        t = depth as u32;
    }
    t
}

/// The job `cayley run SPEC` plans (`--shard-pieces 1` when not reduced).
fn job_of(spec: &str, shard_pieces: Option<usize>) -> Job {
    Job::new(parse_puzzle(spec, Metric::Mtm).unwrap(), shard_pieces).unwrap()
}

#[test]
fn keep_last2_leaves_the_live_and_the_small_early_levels() {
    let d = dirs();
    assert_success(&d.run(&["--shard-pieces", "1", "--keep-levels", "last2"]));
    assert_published(&d.out);
    let diameter = published().len() as u32 - 1;
    let t = early_levels_last2_keeps(&d.ck, &job_of("loopover:2x5 --no-symmetry", Some(1)));
    assert!(t >= 1 && diameter - 1 - t > 4, "2×5 keeps levels 1..={}", t);
    let expected: Vec<String> = (1..=t)
        .chain([diameter - 1, diameter])
        .map(|l| format!("L{:04}", l))
        .collect();
    assert_eq!(level_dirs(&d.ck), expected);
    // From depth 11 to the last early level is more than 4 moves: the walk
    // jumps it with a bounded number of membership tests, and every word
    // it finds replays to solved in 12 moves.
    assert_antipode_words_solve(&d.out);
}

#[test]
fn last2_walks_through_its_early_levels_when_they_are_near() {
    // Loopover 3×4 to depth 9: levels 1–5 are small enough to keep, 6 and
    // 7 are deleted, and the walk jumps from 8 to 5 in three moves.
    let d = dirs();
    let mut args = vec!["run", "loopover:3x4", "--max-depth", "9", "--keep-levels", "last2"];
    args.extend(["--checkpoint-dir", s(&d.ck), "--out", s(&d.out), "-q"]);
    assert_success(&cayley(&args));
    let t = early_levels_last2_keeps(&d.ck, &job_of("loopover:3x4", None));
    assert!((4..8).contains(&t), "levels 1..={} kept", t);
    let expected: Vec<String> = (1..=t).chain([8, 9]).map(|l| format!("L{:04}", l)).collect();
    assert_eq!(level_dirs(&d.ck), expected);
    let json = read_json(&d.out.join("result.json")).unwrap();
    let antipodes = json["antipodes"].as_array().unwrap();
    assert_eq!(antipodes.len(), 10);
    for a in antipodes {
        let labels: Vec<u32> = a["state"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().parse().unwrap())
            .collect();
        let mut grid: Vec<Vec<u32>> = labels.chunks(4).map(<[u32]>::to_vec).collect();
        let word = a["word"].as_str().unwrap();
        assert_eq!(word.split_whitespace().count(), 9, "{}", word);
        replay(&mut grid, word);
        let solved: Vec<Vec<u32>> = (0..3).map(|r| (1..=4).map(|c| r * 4 + c).collect()).collect();
        assert_eq!(grid, solved, "{} does not solve {:?}", word, labels);
    }
}

#[test]
fn keep_every_k_leaves_every_kth_level_and_shortest_words() {
    // Reduced (the default) and unreduced; K = 3 and 4 walk back through
    // gaps of up to K moves to the next kept level.
    for (k, reduced) in [(3u32, true), (4, false)] {
        let d = dirs();
        let keep = format!("every:{}", k);
        let args = if reduced {
            d.reduced_run_args(&["--keep-levels", &keep])
        } else {
            d.run_args(&["--shard-pieces", "2", "--keep-levels", &keep])
        };
        assert_success(&cayley(&args));
        assert_published(&d.out);
        let diameter = published().len() as u32 - 1;
        let expected: Vec<String> = (1..=diameter)
            .filter(|l| l % k == 0 || l + 1 >= diameter)
            .map(|l| format!("L{:04}", l))
            .collect();
        assert_eq!(level_dirs(&d.ck), expected, "{}", keep);
        assert_antipode_words_solve(&d.out);
    }
}

/// Applies a Loopover word to a grid of labels (README: `R2+1` shifts
/// row 2 one cell right, `C1-2` shifts column 1 two cells up).
fn replay(grid: &mut [Vec<u32>], word: &str) {
    let (rows, cols) = (grid.len() as i64, grid[0].len() as i64);
    for mv in word.split_whitespace() {
        let (line, amount) = mv[1..].split_once(['+', '-']).expect("move amount");
        let line: usize = line.parse::<usize>().unwrap() - 1;
        let mut amount: i64 = amount.parse().unwrap();
        if mv[1..].contains('-') {
            amount = -amount;
        }
        let before = grid.to_vec();
        match &mv[..1] {
            "R" => {
                for c in 0..cols {
                    grid[line][(c + amount).rem_euclid(cols) as usize] = before[line][c as usize];
                }
            }
            "C" => {
                for r in 0..rows {
                    grid[(r + amount).rem_euclid(rows) as usize][line] = before[r as usize][line];
                }
            }
            other => panic!("unknown move {}", other),
        }
    }
}

/// Checks `svg` is one balanced `<svg>` element and returns the titles
/// of its `<rect>` elements.
fn svg_bar_titles(svg: &str) -> Vec<String> {
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let mut open: Vec<&str> = Vec::new();
    let mut titles = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let end = start + rest[start..].find('>').expect("unclosed tag");
        let tag = &rest[start + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "mismatched </{}>", name);
            if name == "title" && open.last() == Some(&"rect") {
                titles.push(rest[..start].rsplit('>').next().unwrap().to_string());
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("tag name");
            assert!(open.is_empty() == (name == "svg"), "<{}> outside or inside <svg>", name);
            open.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed {:?}", open);
    titles
}

#[test]
fn result_folder_is_complete_and_keep_all_keeps_every_level() {
    // Reduced by the board's symmetries, as `cayley run` does by default.
    let d = dirs();
    assert_success(&cayley(&d.reduced_run_args(&[])));
    assert_published(&d.out);
    // Level 0 is the solved state, made by every reader: never stored.
    let expected: Vec<String> = (1..published().len()).map(|l| format!("L{:04}", l)).collect();
    assert_eq!(level_dirs(&d.ck), expected);

    let csv = std::fs::read_to_string(d.out.join("depths.csv")).unwrap();
    let rows: Vec<String> = published()
        .iter()
        .enumerate()
        .map(|(d, c)| format!("{},{}", d, c))
        .collect();
    assert_eq!(csv, format!("depth,count\n{}\n", rows.join("\n")));

    let svg = std::fs::read_to_string(d.out.join("depths.svg")).unwrap();
    let bars: Vec<String> = published()
        .iter()
        .enumerate()
        .map(|(d, c)| format!("depth {}: {}", d, c))
        .collect();
    assert_eq!(svg_bar_titles(&svg), bars);

    assert_antipode_words_solve(&d.out);
}

/// antipodes.txt and result.json in `out`: ten antipodes (states, or
/// classes of symmetric states), each as a 2×5 grid of the labels 1..10
/// and a word of diameter length that solves it.
fn assert_antipode_words_solve(out: &Path) {
    let text = std::fs::read_to_string(out.join("antipodes.txt")).unwrap();
    let json = read_json(&out.join("result.json")).unwrap();
    let antipodes = json["antipodes"].as_array().unwrap();
    assert_eq!(antipodes.len(), 10);
    let header = text.lines().next().unwrap_or_default();
    assert!(
        // A reduced run lists one state per class of symmetric states.
        header.starts_with("loopover:2x5")
            && header.contains("(mtm): 315 state(s)")
            && header.contains(" at depth 12;"),
        "{}",
        text
    );
    let entries: Vec<&str> = text.split("\n#").skip(1).collect();
    assert_eq!(entries.len(), antipodes.len(), "{}", text);
    for (entry, a) in entries.iter().zip(antipodes) {
        let lines: Vec<&str> = entry.lines().collect();
        let mut grid: Vec<Vec<u32>> = lines[1..3]
            .iter()
            .map(|line| line.split_whitespace().map(|c| c.parse().unwrap()).collect())
            .collect();
        assert!(grid.iter().all(|row| row.len() == 5), "{:?}", grid);
        let mut labels: Vec<u32> = grid.concat();
        let flat: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        assert_eq!(a["state"], serde_json::json!(flat));
        labels.sort_unstable();
        assert_eq!(labels, (1..=10).collect::<Vec<u32>>());
        let word = lines[3].strip_prefix("solve: ").expect("solve line");
        assert_eq!(word, a["word"]);
        assert_eq!(word.split_whitespace().count(), published().len() - 1);
        replay(&mut grid, word);
        assert_eq!(grid, [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], "{} does not solve it", word);
    }
}
