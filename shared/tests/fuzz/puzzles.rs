//! What every accepted puzzle must satisfy, whatever text it came from.

use crate::edits::assert_clear;
use cayley_shared::puzzle::{Puzzle, SpecError};
use std::collections::HashSet;

/// The engine's contract on a parsed puzzle: moves are permutations of its
/// slots with twists and guards in range, distinct non-empty names, a solved
/// state of the right shape, and every move's inverse among the moves
/// unless the graph was asked to be directed.
pub fn assert_well_formed(p: &Puzzle, input: &str) {
    let n = p.slots;
    assert!(
        n >= 1 && !p.moves.is_empty(),
        "{:?}: {} slots, {} moves",
        input,
        n,
        p.moves.len()
    );
    // A name is one move, or guarded moves of which one at most is legal
    // at a time (a sliding puzzle's `U` for every place of the blank).
    let mut names = HashSet::new();
    for m in &p.moves {
        let unique = names.insert((&m.name, m.guard.map(|g| (g.piece, g.slot))));
        let shared = p.moves.iter().filter(|o| o.name == m.name).count() > 1;
        assert!(!m.name.is_empty() && unique, "{:?}: move name {:?}", input, m.name);
        assert!(
            !shared || m.guard.is_some(),
            "{:?}: two unguarded moves {:?}",
            input,
            m.name
        );
        assert_eq!(m.perm.degree(), n, "{:?}: move {}", input, m.name);
        if let Some(g) = m.guard {
            assert!(g.slot < n && g.piece < n, "{:?}: guard of {}", input, m.name);
        }
        if !m.twist.is_empty() {
            let modulus = &p.coding.as_ref().expect("twists need a coding").modulus;
            assert_eq!(m.twist.len(), n, "{:?}: twists of {}", input, m.name);
            for (s, &t) in m.twist.iter().enumerate() {
                assert!(
                    t < modulus[m.perm[s] as usize],
                    "{:?}: twist of {} at {}",
                    input,
                    m.name,
                    s
                );
            }
        }
    }
    match &p.coding {
        None => {
            assert_eq!(p.labels.len(), n, "{:?}: labels", input);
            let mut solved = p.solved.clone();
            solved.sort_unstable();
            assert!(
                solved.iter().copied().eq((0..n).map(|i| i as u8)),
                "{:?}: solved {:?}",
                input,
                p.solved
            );
        }
        Some(coding) => {
            assert_eq!(p.solved.len(), 2 * n, "{:?}: coded solved", input);
            assert_eq!(coding.modulus.len(), n, "{:?}: moduli", input);
            let classes = coding.class_labels.len();
            assert!(
                p.solved[..n].iter().all(|&c| (c as usize) < classes),
                "{:?}: classes",
                input
            );
            for (s, &t) in p.solved[n..].iter().enumerate() {
                assert!(t < coding.modulus[s], "{:?}: solved twist at {}", input, s);
            }
        }
    }
    if !p.spec.contains(" --directed") {
        assert!(p.is_undirected(), "{:?}: a move's inverse is missing", input);
    }
}

/// Two parses of one puzzle agree in everything the engine uses.
pub fn same_puzzle(a: &Puzzle, b: &Puzzle, input: &str) {
    assert_eq!(a.spec, b.spec, "{:?}", input);
    assert_eq!(a.slots, b.slots, "{:?}", input);
    assert_eq!(a.solved, b.solved, "{:?}", input);
    assert_eq!(a.labels, b.labels, "{:?}", input);
    assert_eq!(a.coding, b.coding, "{:?}", input);
    assert_eq!(a.reachable_states, b.reachable_states, "{:?}", input);
    let moves = |p: &Puzzle| -> Vec<_> {
        p.moves
            .iter()
            .map(|m| (m.name.clone(), m.perm.clone(), m.guard, m.twist.clone()))
            .collect()
    };
    assert_eq!(moves(a), moves(b), "{:?}", input);
    assert_eq!(a.symmetries, b.symmetries, "{:?}", input);
}

/// A refused definition file: one clear line naming the file `path` and,
/// when it names a line, one of the file's lines.
pub fn assert_names_the_line(e: &SpecError, path: &str, text: &str) {
    let message = e.to_string();
    assert_clear(&message, text);
    match e {
        SpecError::BadFile { path: named, line, .. } => {
            assert_eq!(named, path, "{}", message);
            if let Some(line) = *line {
                assert!(line >= 1 && line <= text.lines().count(), "{:?}: {}", text, message);
            }
        }
        other => panic!("{:?}: not a file error: {}", text, other),
    }
}
