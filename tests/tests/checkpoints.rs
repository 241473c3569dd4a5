//! Checkpoints end to end (issue 4): real `cayley` processes killed and
//! resumed, refused, and the result folder (damaged files and a full disk:
//! `damaged_checkpoints.rs`).
//!
//! Every table is compared with Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv; everything else is checked against
//! identities (counts add up, words replay to solved), never against an
//! earlier output of this program.

use cayley_tests::checkpoint::*;
use cayley_tests::{cayley, read_json, write_json};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Duration;

#[test]
fn killed_runs_resume_to_the_published_table() {
    for seed in 1..=5u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let d = dirs();
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

#[test]
fn keep_last2_leaves_two_levels_and_no_words() {
    let d = dirs();
    assert_success(&d.run(&["--shard-pieces", "1", "--keep-levels", "last2"]));
    assert_published(&d.out);
    let kept = level_dirs(&d.ck);
    assert!(kept.len() <= 3, "{:?}", kept);
    assert!(kept.contains(&"L0012".to_string()), "{:?}", kept);
    let text = std::fs::read_to_string(d.out.join("antipodes.txt")).unwrap();
    assert!(text.contains("not available"), "{}", text);
    let json = read_json(&d.out.join("result.json")).unwrap();
    for a in json["antipodes"].as_array().unwrap() {
        assert_eq!(a["word"], "");
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
        let diameter = PUBLISHED.len() as u32 - 1;
        let expected: Vec<String> = (1..=diameter)
            .filter(|l| l % k == 0 || l + 1 >= diameter)
            .map(|l| format!("L{:04}", l))
            .collect();
        assert_eq!(level_dirs(&d.ck), expected, "{}", keep);
        assert_antipode_words_solve(&d.out);
    }
}

/// Applies a Loopover word to a 2×5 grid of labels (README: `R2+1` shifts
/// row 2 one cell right, `C1-2` shifts column 1 two cells up).
fn replay(grid: &mut [[u32; 5]; 2], word: &str) {
    for mv in word.split_whitespace() {
        let (line, amount) = mv[1..].split_once(['+', '-']).expect("move amount");
        let line: usize = line.parse::<usize>().unwrap() - 1;
        let mut amount: i64 = amount.parse().unwrap();
        if mv[1..].contains('-') {
            amount = -amount;
        }
        let before = *grid;
        match &mv[..1] {
            "R" => {
                for c in 0..5 {
                    grid[line][(c + amount).rem_euclid(5) as usize] = before[line][c as usize];
                }
            }
            "C" => {
                for r in 0..2 {
                    grid[(r + amount).rem_euclid(2) as usize][line] = before[r as usize][line];
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
    let expected: Vec<String> = (1..PUBLISHED.len()).map(|l| format!("L{:04}", l)).collect();
    assert_eq!(level_dirs(&d.ck), expected);

    let csv = std::fs::read_to_string(d.out.join("depths.csv")).unwrap();
    let rows: Vec<String> = PUBLISHED
        .iter()
        .enumerate()
        .map(|(d, c)| format!("{},{}", d, c))
        .collect();
    assert_eq!(csv, format!("depth,count\n{}\n", rows.join("\n")));

    let svg = std::fs::read_to_string(d.out.join("depths.svg")).unwrap();
    let bars: Vec<String> = PUBLISHED
        .iter()
        .enumerate()
        .map(|(d, c)| format!("depth {}: {}", d, c))
        .collect();
    assert_eq!(svg_bar_titles(&svg), bars);

    assert_antipode_words_solve(&d.out);
}

/// antipodes.txt and result.json in `out`: ten antipodes, each as a 2×5
/// grid of the labels 1..10 and a word of diameter length that solves it.
fn assert_antipode_words_solve(out: &Path) {
    let text = std::fs::read_to_string(out.join("antipodes.txt")).unwrap();
    let json = read_json(&out.join("result.json")).unwrap();
    let antipodes = json["antipodes"].as_array().unwrap();
    assert_eq!(antipodes.len(), 10);
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("loopover:2x5") && header.contains("(mtm): 315 state(s) at depth 12"),
        "{}",
        text
    );
    let entries: Vec<&str> = text.split("\n#").skip(1).collect();
    assert_eq!(entries.len(), antipodes.len(), "{}", text);
    for (entry, a) in entries.iter().zip(antipodes) {
        let lines: Vec<&str> = entry.lines().collect();
        let mut grid = [[0u32; 5]; 2];
        for (r, line) in lines[1..3].iter().enumerate() {
            let cells: Vec<u32> = line.split_whitespace().map(|c| c.parse().unwrap()).collect();
            grid[r] = cells.try_into().unwrap_or_else(|c| panic!("row {:?}", c));
        }
        let mut labels: Vec<u32> = grid.concat();
        let flat: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        assert_eq!(a["state"], serde_json::json!(flat));
        labels.sort_unstable();
        assert_eq!(labels, (1..=10).collect::<Vec<u32>>());
        let word = lines[3].strip_prefix("solve: ").expect("solve line");
        assert_eq!(word, a["word"]);
        assert_eq!(word.split_whitespace().count(), PUBLISHED.len() - 1);
        replay(&mut grid, word);
        assert_eq!(grid, [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], "{} does not solve it", word);
    }
}
