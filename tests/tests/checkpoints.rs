//! Checkpoints end to end (issue 4): real `cayley` processes killed,
//! refused, fed damaged files and a full disk, and the result folder.
//!
//! Every table is compared with Loopover 2×5 MTM from
//! tests/data/loopover-mtm.csv; everything else is checked against
//! identities (counts add up, words replay to solved), never against an
//! earlier output of this program.

use cayley_tests::{
    cayley, cayley_env, json_u64s, read_json, spawn_cayley, stderr_text, test_dir, wait_for, write_json,
};
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

const PUZZLE: &str = "loopover:2x5";
/// Loopover 2×5 MTM, tests/data/loopover-mtm.csv.
const PUBLISHED: [u64; 13] = [
    1, 13, 106, 790, 4845, 25771, 121338, 472506, 1251350, 1484825, 258645, 8295, 315,
];
/// Generous bound for polling a running job (the whole table takes a few seconds).
const PATIENCE: Duration = Duration::from_secs(120);

/// One test's directories: the checkpoint, the result folder and scratch.
struct Dirs {
    _root: tempfile::TempDir,
    ck: PathBuf,
    out: PathBuf,
    scratch: PathBuf,
}

fn dirs() -> Dirs {
    let root = test_dir();
    Dirs {
        ck: root.path().join("ck"),
        out: root.path().join("out"),
        scratch: root.path().join("scratch"),
        _root: root,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

impl Dirs {
    /// `cayley run loopover:2x5 --no-symmetry --checkpoint-dir … extra…`:
    /// these tests address the files of particular shards, so they use the
    /// unreduced plan (`reduced_run_args` for the reduced one).
    fn run_args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = self.reduced_run_args(extra);
        args.insert(2, "--no-symmetry");
        args
    }

    /// `cayley run loopover:2x5 --checkpoint-dir … extra…` (reduced by the
    /// board's symmetries).
    fn reduced_run_args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["run", PUZZLE, "--checkpoint-dir", s(&self.ck)];
        args.extend(self.output_args());
        args.extend_from_slice(extra);
        args
    }

    /// `cayley resume CK --out …`
    fn resume_args(&self) -> Vec<&str> {
        let mut args = vec!["resume", s(&self.ck)];
        args.extend(self.output_args());
        args
    }

    /// Where results and scratch go, and quiet output.
    fn output_args(&self) -> [&str; 5] {
        ["--out", s(&self.out), "--scratch", s(&self.scratch), "-q"]
    }

    fn run(&self, extra: &[&str]) -> Output {
        cayley(&self.run_args(extra))
    }

    fn resume(&self) -> Output {
        cayley(&self.resume_args())
    }

    /// Runs until `CAYLEY_FAULT_DISK_FULL=level:chunk` stops the job.
    fn run_until_disk_full(&self, level: u32, chunk: u64, extra: &[&str]) -> String {
        let fault = format!("{}:{}", level, chunk);
        let o = cayley_env(&self.run_args(extra), &[("CAYLEY_FAULT_DISK_FULL", &fault)]);
        let err = stderr_text(&o);
        assert!(!o.status.success(), "the injected full disk went unnoticed: {}", err);
        err
    }

    fn manifest(&self) -> serde_json::Value {
        read_json(&self.ck.join("manifest.json")).expect("manifest.json")
    }

    fn chunk(&self, level: u32, chunk: u64) -> PathBuf {
        chunk_file(&self.ck, level, chunk)
    }
}

fn chunk_file(ck: &Path, level: u32, chunk: u64) -> PathBuf {
    ck.join("levels")
        .join(format!("L{:04}", level))
        .join(format!("C{:08}.chunk", chunk))
}

/// `(chunk, states)` of every chunk a level's journal records (the states
/// its stored bits stand for).
fn journal(ck: &Path, level: usize) -> Vec<(u64, u64)> {
    let path = ck.join("levels").join(format!("L{:04}", level)).join("done.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut records = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Ok(r) = serde_json::from_str::<serde_json::Value>(line) {
            records.insert(r["chunk"].as_u64().unwrap(), r["states"].as_u64().unwrap());
        }
    }
    records.into_iter().collect()
}

fn assert_success(o: &Output) {
    assert!(o.status.success(), "cayley failed: {}", stderr_text(o));
}

/// A refusal: non-zero exit and exactly one `error:` line saying `needle`.
fn assert_refused(o: &Output, needle: &str) {
    let err = stderr_text(o);
    assert!(!o.status.success(), "not refused: {}", err);
    assert_eq!(err.trim().lines().count(), 1, "not one line: {}", err);
    assert!(err.starts_with("error: ") && err.contains(needle), "{}", err);
}

/// result.json in `out` holds the published table, complete.
fn assert_published(out: &Path) {
    let json = read_json(&out.join("result.json")).expect("result.json");
    assert_eq!(
        json_u64s(&json["depths"]),
        PUBLISHED,
        "wrong table in {}",
        out.display()
    );
    assert_eq!(json["complete"], true);
    assert_eq!(json["states"], PUBLISHED.iter().sum::<u64>());
    assert_eq!(json["diameter"], PUBLISHED.len() - 1);
}

/// The manifest of a stopped or killed job describes a consistent prefix
/// of the work: its levels are the published counts, each kept level's
/// journal records every chunk and adds up to its count, and every file the
/// records rely on exists.
fn assert_manifest_consistent(ck: &Path) {
    let m = read_json(&ck.join("manifest.json")).expect("manifest.json");
    let levels = m["levels"].as_array().expect("levels");
    let counts: Vec<u64> = levels.iter().map(|l| l["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, PUBLISHED[..counts.len()], "recorded levels");
    let keep_all = m["keep_levels"] == "all";
    let chunks = m["job"]["chunks"].as_u64().unwrap();
    // Level 0 (the solved state) is made by every reader, never stored.
    for (depth, &count) in counts.iter().enumerate().skip(1) {
        if keep_all || depth + 2 >= levels.len() {
            let records = journal(ck, depth);
            assert_eq!(records.len() as u64, chunks, "level {} journal", depth);
            assert_eq!(records.iter().map(|r| r.1).sum::<u64>(), count);
            for chunk in 0..chunks {
                assert!(
                    chunk_file(ck, depth as u32, chunk).exists(),
                    "level {} chunk {}",
                    depth,
                    chunk
                );
            }
        }
    }
    if m["finished"] == true {
        assert_eq!(counts, PUBLISHED);
    } else if let Some(running) = m["running"].as_object() {
        let next = running["from_level"].as_u64().unwrap() as usize + 1;
        assert_eq!(next, levels.len());
        for (chunk, _) in journal(ck, next) {
            assert!(chunk_file(ck, next as u32, chunk).exists());
        }
    }
}

/// Number of completed levels recorded in a checkpoint (0 before the manifest exists).
fn levels_done(ck: &Path) -> usize {
    read_json(&ck.join("manifest.json")).map_or(0, |m| m["levels"].as_array().map_or(0, |l| l.len()))
}

/// Starts `args`, waits until the checkpoint records depth `level`, then
/// `extra_ms` more, then SIGKILLs the process.
fn kill_after_level(args: &[&str], ck: &Path, level: usize, extra_ms: u64) {
    let mut child = spawn_cayley(args);
    let mut exited = None;
    let reached = wait_for(PATIENCE, || {
        exited = child.try_wait().expect("child status");
        levels_done(ck) > level || exited.is_some()
    });
    assert!(reached, "depth {} was never recorded", level);
    // It may have finished the whole job first (then resuming it must only
    // rewrite the results), but not failed.
    assert!(exited.is_none_or(|status| status.success()), "{:?}", exited);
    std::thread::sleep(Duration::from_millis(extra_ms));
    let _ = child.kill();
    child.wait().expect("reap cayley");
}

#[test]
fn killed_runs_resume_to_the_published_table() {
    for seed in 1..=4u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let d = dirs();
        let keep = if seed % 2 == 0 { "all" } else { "last2" };
        // Unreduced: 90 shards in 18 chunk files of 5; reduced: 26 classes.
        let run = if seed <= 2 {
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

/// Truncates a file to half its length.
fn truncate(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

/// Flips one byte in the middle of a chunk file's compressed payload (after
/// the 96-byte header and the 32-byte index entry of each shard).
fn flip_payload_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let shards = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
    let start = 96 + 32 * shards;
    assert!(bytes.len() > start, "{} has no payload", path.display());
    let at = start + (bytes.len() - start) / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

/// Chunks of `level` holding at least one state, most populous first.
fn populated_chunks(ck: &Path, level: usize) -> Vec<u64> {
    let mut records: Vec<(u64, u64)> = journal(ck, level).into_iter().filter(|r| r.1 > 0).collect();
    records.sort_by_key(|&(_, stored)| std::cmp::Reverse(stored));
    records.into_iter().map(|r| r.0).collect()
}

#[test]
fn damaged_inputs_are_named_and_recomputed() {
    // Stopped while computing level 6: level 5 is what the resumed job reads.
    let d = dirs();
    let plan = ["--shard-pieces", "2", "--chunk-shards", "1"];
    d.run_until_disk_full(6, 40, &plan);
    let chunks = populated_chunks(&d.ck, 5);
    let (truncated, flipped, swapped) = (d.chunk(5, chunks[0]), d.chunk(5, chunks[1]), d.chunk(5, chunks[2]));
    truncate(&truncated);
    flip_payload_byte(&flipped);
    // The same-named file of another job (STM, same shard plan).
    let other = dirs();
    let mut args = plan.to_vec();
    args.extend(["--metric", "stm", "--max-depth", "5"]);
    assert_success(&other.run(&args));
    std::fs::copy(chunk_file(&other.ck, 5, chunks[2]), &swapped).unwrap();

    let o = d.resume();
    let err = stderr_text(&o);
    assert_success(&o);
    for damaged in [&truncated, &flipped, &swapped] {
        assert!(err.contains(s(damaged)), "{} not named: {}", damaged.display(), err);
    }
    assert_published(&d.out);
    assert_manifest_consistent(&d.ck);
}

#[test]
fn recorded_outputs_of_the_running_level_are_verified_on_resume() {
    // With --keep-levels last2 a bad output of the running level can only be
    // recomputed while that level runs: later, its inputs are gone.
    let d = dirs();
    d.run_until_disk_full(
        7,
        20,
        &["--shard-pieces", "2", "--chunk-shards", "1", "--keep-levels", "last2"],
    );
    let done = populated_chunks(&d.ck, 7);
    assert!(done.len() >= 2, "too few recorded tasks: {:?}", journal(&d.ck, 7));
    let (flipped, truncated) = (d.chunk(7, done[0]), d.chunk(7, done[1]));
    flip_payload_byte(&flipped);
    truncate(&truncated);
    let o = d.resume();
    let err = stderr_text(&o);
    assert_success(&o);
    for damaged in [&flipped, &truncated] {
        assert!(err.contains(s(damaged)), "{} not named: {}", damaged.display(), err);
    }
    assert_published(&d.out);
}

#[test]
fn damage_that_cannot_be_recomputed_stops_with_the_file_named() {
    // last2: level 6 needs levels 5 and 4 to be recomputed, and 4 is gone.
    let d = dirs();
    d.run_until_disk_full(
        7,
        20,
        &["--shard-pieces", "2", "--chunk-shards", "1", "--keep-levels", "last2"],
    );
    let damaged = d.chunk(6, populated_chunks(&d.ck, 6)[0]);
    flip_payload_byte(&damaged);
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(!o.status.success(), "{}", err);
    assert!(
        err.contains(s(&damaged)) && err.contains("cannot be recomputed"),
        "{}",
        err
    );
    assert!(err.contains("error: "), "{}", err);
    assert!(!d.out.join("result.json").exists());
    assert_manifest_consistent(&d.ck);
}

#[test]
fn damaged_level_of_a_finished_job_is_named_and_the_results_kept() {
    // Rewriting the results walks back through every level for the
    // antipodes' words; a damaged level must stop that, not print a wrong word
    // or overwrite good results.
    let d = dirs();
    assert_success(&d.run(&[]));
    let good = std::fs::read(d.out.join("result.json")).unwrap();
    let damaged = d.chunk(3, 0);
    flip_payload_byte(&damaged);
    let o = d.resume();
    let err = stderr_text(&o);
    assert!(!o.status.success(), "{}", err);
    assert!(err.contains(s(&damaged)), "{}", err);
    assert_eq!(std::fs::read(d.out.join("result.json")).unwrap(), good);
    assert_published(&d.out);
}

#[test]
fn disk_full_stops_the_job_and_resume_finishes_it() {
    let d = dirs();
    let err = d.run_until_disk_full(5, 3, &["--shard-pieces", "1"]);
    assert!(err.contains("disk full"), "{}", err);
    assert!(err.contains(&format!("cayley resume {}", s(&d.ck))), "{}", err);
    assert!(!d.out.join("result.json").exists());
    assert_manifest_consistent(&d.ck);
    assert_eq!(levels_done(&d.ck), 5);
    assert!(!d.chunk(5, 3).exists());
    // What a writer killed mid-write leaves behind must be ignored.
    let level5 = d.chunk(5, 3).with_file_name("C00000003.chunk.tmp-4242-beef");
    std::fs::create_dir_all(level5.parent().unwrap()).unwrap();
    std::fs::write(&level5, b"CAYLEYCK half a file").unwrap();
    std::fs::write(d.chunk(4, 3).with_file_name("C00000003.chunk.tmp-4242-dead"), b"").unwrap();
    std::fs::write(d.ck.join("manifest.json.tmp"), b"{\"format_version\": 1, \"fingerpr").unwrap();

    assert_success(&d.resume());
    assert_published(&d.out);
    assert_manifest_consistent(&d.ck);
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

    // antipodes.txt: each antipode as a 2×5 grid of the labels 1..10 and a
    // word of diameter length that solves it.
    let text = std::fs::read_to_string(d.out.join("antipodes.txt")).unwrap();
    let json = read_json(&d.out.join("result.json")).unwrap();
    let antipodes = json["antipodes"].as_array().unwrap();
    assert_eq!(antipodes.len(), 10);
    assert!(
        text.starts_with("loopover:2x5 (mtm): 315 state(s) at depth 12"),
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
