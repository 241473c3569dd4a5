//! The README's set-up (`cargo build --release -p
//! cayley-coordinator -p cayley-worker`) and its test command (`cargo test
//! --workspace --release`) must build every dependency with the same
//! features. Cargo compiles a dependency once per set of features, with
//! everything that depends on it, so a dev-dependency that turns on one
//! more feature (proptest turned on getrandom's `std` and regex-syntax's
//! `unicode`) made the tests compile `cayley-shared` and the dependencies
//! above those two again. The features are cargo's own resolution, read
//! with `cargo tree`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Each package of the dependency tree `cargo tree args…` prints, with the
/// sets of features it is built with.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let out = Command::new(cargo)
        .current_dir(workspace)
        .args([
            "tree",
            "--locked",
            "--offline",
            "--prefix",
            "none",
            "--format",
            "{p} {f}",
        ])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // "name vX.Y.Z [(path)] features [(*)]"
        let words: Vec<&str> = line.split_whitespace().filter(|w| !w.starts_with('(')).collect();
        if let [name, version, rest @ ..] = words.as_slice() {
            let features = rest.first().copied().unwrap_or("").to_string();
            packages
                .entry(format!("{} {}", name, version))
                .or_default()
                .insert(features);
        }
    }
    packages
}

#[test]
fn the_binaries_and_the_tests_build_dependencies_with_the_same_features() {
    let binaries = features(&["-p", "cayley-coordinator", "-p", "cayley-worker", "-e", "normal"]);
    let tests = features(&["--workspace", "-e", "normal,dev"]);
    assert!(binaries.len() > 50, "cargo tree listed too little: {:?}", binaries);
    let differ: Vec<String> = binaries
        .iter()
        .filter_map(|(package, built)| {
            let tested = tests.get(package)?;
            (built != tested).then(|| format!("{}: {:?} for the binaries, {:?} for the tests", package, built, tested))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "pin the tests' features in shared/Cargo.toml, or the tests compile these again: {:#?}",
        differ
    );
}
