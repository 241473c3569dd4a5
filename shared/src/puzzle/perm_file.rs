//! Generic permutation puzzles from a file of generators (`perm:FILE`).
//!
//! One generator per line, `name: (1,2,3)(4,5)`, in 1-based cycle notation
//! (commas or spaces between the points of a cycle); `#` starts a comment;
//! blank lines are ignored. The degree is the largest point mentioned. The
//! Cayley graph is undirected: the inverse of every generator that is not
//! already among them is added, named `name'`, unless the user asks for the
//! directed graph (`--directed`).
//!
//! A line `symmetry NAME: (1,2)(3,4)` declares a symmetry of the puzzle: a
//! permutation of the points that maps the generator set (with the added
//! inverses) onto itself. Each one is checked, and one that is not a
//! symmetry is refused with its line.

use super::spec_text::read_spec_file;
use super::{add_missing_inverses, number_labels, unguarded_moves, Metric, Puzzle, SpecError};
use crate::puzzle::perm::{Perm, MAX_POINTS};
use std::collections::HashMap;

/// One generator (or declared symmetry) as written: its name, cycles
/// (0-based points) and line.
struct Written {
    name: String,
    cycles: Vec<Vec<usize>>,
    line: usize,
}

/// Prefix of a line that declares a symmetry.
const SYMMETRY_PREFIX: &str = "symmetry ";

/// Reads `path` (unless its `text` is given) and builds the puzzle; `spec`
/// is what the user typed.
pub fn perm_puzzle(
    spec: &str,
    path: &str,
    metric: Metric,
    text: Option<&str>,
    directed: bool,
) -> Result<Puzzle, SpecError> {
    let text = match text {
        Some(t) => t.to_string(),
        None => read_spec_file(spec, path)?,
    };
    let (written, declared) = parse_generators(path, &text)?;
    let degree = written
        .iter()
        .flat_map(|g| g.cycles.iter().flatten())
        .max()
        .map_or(0, |&p| p + 1);
    let mut moves = unguarded_moves(
        written
            .iter()
            .map(|g| (g.name.clone(), perm_from_cycles(degree, &g.cycles))),
    );
    if !directed {
        add_missing_inverses(&mut moves);
    }
    let spec = if directed {
        super::spec_text::job_spec(spec, true, None)
    } else {
        spec.to_string()
    };
    let mut puzzle = Puzzle::permutation(&spec, metric, moves, number_labels(1..=degree));
    for w in declared {
        let fail = |why: String| SpecError::BadFile {
            path: path.to_string(),
            line: Some(w.line),
            why,
        };
        if let Some(&point) = w.cycles.iter().flatten().find(|&&p| p >= degree) {
            return Err(fail(format!(
                "symmetry '{}' moves point {}, beyond the generators' {} points",
                w.name,
                point + 1,
                degree
            )));
        }
        let sigma = perm_from_cycles(degree, &w.cycles);
        crate::puzzle::symmetry::verify(&puzzle, &w.name, &sigma).map_err(fail)?;
        puzzle.symmetries.push((w.name, sigma));
    }
    Ok(puzzle)
}

/// Parses every generator line of `text`, and the declared symmetries.
fn parse_generators(path: &str, text: &str) -> Result<(Vec<Written>, Vec<Written>), SpecError> {
    let mut out: Vec<Written> = Vec::new();
    let mut symmetries: Vec<Written> = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let fail = |why: String| SpecError::BadFile {
            path: path.to_string(),
            line: Some(line),
            why,
        };
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let (name, cycles) = content
            .split_once(':')
            .ok_or_else(|| fail(format!("expected 'name: (1,2,3)(4,5)', found '{}'", content)))?;
        let (is_symmetry, name) = match name.trim().strip_prefix(SYMMETRY_PREFIX) {
            Some(rest) => (true, rest.trim()),
            None => (false, name.trim()),
        };
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',') {
            return Err(fail(format!(
                "bad generator name '{}': one word without parentheses or commas",
                name
            )));
        }
        if let Some(first) = names.get(name) {
            return Err(fail(format!(
                "generator name '{}' is already used on line {}",
                name, first
            )));
        }
        let cycles = parse_cycles(cycles).map_err(&fail)?;
        check_generator(name, &cycles).map_err(&fail)?;
        names.insert(name.to_string(), line);
        let w = Written {
            name: name.to_string(),
            cycles,
            line,
        };
        if is_symmetry {
            symmetries.push(w);
        } else {
            out.push(w);
        }
    }
    if out.is_empty() {
        return Err(SpecError::BadFile {
            path: path.to_string(),
            line: None,
            why: "no generators (expected lines like 'a: (1,2,3)(4,5)')".into(),
        });
    }
    Ok((out, symmetries))
}

/// Parses `(1,2,3)(4 5)` into 0-based cycles.
fn parse_cycles(text: &str) -> Result<Vec<Vec<usize>>, String> {
    let mut cycles = Vec::new();
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err("no cycles after the colon; write e.g. (1,2,3)(4,5)".into());
    }
    while !rest.is_empty() {
        let Some(body) = rest.strip_prefix('(') else {
            return Err(format!("expected '(' at '{}'", rest));
        };
        let close = body
            .find(')')
            .ok_or_else(|| format!("unclosed '(' in '{}'", text.trim()))?;
        let inner = &body[..close];
        if inner.contains('(') {
            return Err(format!("nested '(' in '{}'", text.trim()));
        }
        cycles.push(parse_cycle(inner)?);
        rest = body[close + 1..].trim_start();
    }
    Ok(cycles)
}

/// Parses the inside of one cycle: points separated by commas or spaces.
fn parse_cycle(inner: &str) -> Result<Vec<usize>, String> {
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut points = Vec::new();
    for part in inner.split(',') {
        let tokens: Vec<&str> = part.split_whitespace().collect();
        if tokens.is_empty() {
            return Err(format!("empty entry between commas in '({})'", inner));
        }
        for token in tokens {
            let point: usize = token
                .parse()
                .map_err(|_| format!("'{}' is not a point number in '({})'", token, inner))?;
            if point == 0 {
                return Err(format!("point 0 in '({})': points are numbered from 1", inner));
            }
            if point > MAX_POINTS {
                return Err(format!(
                    "point {} is out of range: at most {} points are supported",
                    point, MAX_POINTS
                ));
            }
            points.push(point - 1);
        }
    }
    Ok(points)
}

/// Refuses repeated points and generators that move nothing.
fn check_generator(name: &str, cycles: &[Vec<usize>]) -> Result<(), String> {
    let mut seen = [false; MAX_POINTS];
    for &p in cycles.iter().flatten() {
        if std::mem::replace(&mut seen[p], true) {
            return Err(format!("point {} appears twice in generator '{}'", p + 1, name));
        }
    }
    if cycles.iter().all(|c| c.len() < 2) {
        return Err(format!("generator '{}' is the identity: it moves no point", name));
    }
    Ok(())
}

/// The permutation of `degree` points with the given disjoint cycles.
fn perm_from_cycles(degree: usize, cycles: &[Vec<usize>]) -> Perm {
    // Not `0..degree as u8`: that range is empty at 256 points.
    let mut images: Vec<u8> = Perm::identity(degree).images().to_vec();
    for c in cycles {
        for (k, &p) in c.iter().enumerate() {
            images[p] = c[(k + 1) % c.len()] as u8;
        }
    }
    Perm::from_images(images).expect("disjoint cycles form a permutation")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Written>, SpecError> {
        parse_generators("gens.txt", text).map(|(gens, _)| gens)
    }

    fn error_of(text: &str) -> String {
        match parse(text) {
            Ok(_) => panic!("accepted: {}", text),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn commas_spaces_comments_and_blank_lines() {
        let gens = parse("# A5\n\na: (1 2 3)\nb:(3,4,5) # second\n c : (1, 2)(4 5) \n").unwrap();
        let names: Vec<&str> = gens.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(gens[2].cycles, vec![vec![0, 1], vec![3, 4]]);
        assert_eq!(perm_from_cycles(5, &gens[0].cycles).to_string(), "(1,2,3)");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        for (text, needle) in [
            ("a: (1,2,3\n", "gens.txt:1: unclosed '('"),
            ("a: (1,2)\nb: 1,2\n", "gens.txt:2: expected '('"),
            ("a: (1,2)(2,3)\n", "gens.txt:1: point 2 appears twice in generator 'a'"),
            ("a: (1,2,1)\n", "point 1 appears twice"),
            ("a: (0,1)\n", "point 0"),
            ("a: (1,x)\n", "'x' is not a point number"),
            ("a: (1,,2)\n", "empty entry"),
            ("a: (1,(2))\n", "nested"),
            ("a: (1,300)\n", "point 300 is out of range"),
            (
                "a: (1,2)\n\na: (2,3)\n",
                "gens.txt:3: generator name 'a' is already used on line 1",
            ),
            ("(1,2)\n", "expected 'name: (1,2,3)(4,5)'"),
            ("a b: (1,2)\n", "bad generator name"),
            ("a:\n", "no cycles"),
            ("e: ()(3)\n", "is the identity"),
            ("# nothing\n\n", "gens.txt: no generators"),
        ] {
            let msg = error_of(text);
            assert!(msg.contains(needle), "{:?}: {}", text, msg);
        }
    }

    #[test]
    fn declared_symmetries_are_checked_and_named_with_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a5.txt");
        let path = file.to_str().unwrap();
        let puzzle = |text: &str| {
            std::fs::write(&file, text).unwrap();
            perm_puzzle(&format!("perm:{}", path), path, Metric::Mtm, None, false)
        };
        // (1 5)(2 4) maps (1,2,3) to (5,4,3) = the inverse of (3,4,5), and back.
        let good = puzzle("a: (1,2,3)\nb: (3,4,5)\nsymmetry flip: (1,5)(2,4)\n").unwrap();
        assert_eq!(good.symmetries.len(), 1);
        assert_eq!(good.symmetries[0].0, "flip");
        let err = puzzle("a: (1,2,3)\nb: (3,4,5)\n\nsymmetry bad: (1,4)\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a5.txt:4") && err.contains("'bad' is not a symmetry"),
            "{}",
            err
        );
        let err = puzzle("a: (1,2,3)\nsymmetry far: (1,7)\n").unwrap_err().to_string();
        assert!(err.contains("beyond the generators"), "{}", err);
    }
}
