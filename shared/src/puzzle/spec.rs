//! Parsing of puzzle specs such as `loopover:2x6`.

use super::loopover::loopover;
use super::perm_file::perm_puzzle;
use super::sliding::sliding;
use super::spec_text::{job_spec_with, split_options, strip_no_symmetry, SpecError};
use super::track::parse_track_list;
use super::turnstyle::{turnstyle, turnstyle_cayley};
use super::tws::tws_puzzle;
use super::varikon::varikon;
use super::{Metric, Puzzle};
use crate::puzzle::perm::{MAX_POINTS, MAX_RANKED_POINTS};

/// Families this build understands, with their spec syntax.
pub fn known_families() -> Vec<(&'static str, &'static str)> {
    let mut families = vec![
        ("loopover", "loopover:RxC, R and C at least 2"),
        ("sliding", "sliding:RxC, R and C at least 2, R·C at most 20"),
        ("varikon", "varikon, the 2×2×2 Varikon box"),
        ("turnstyle", "turnstyle:N, N from 4 to 21, rotation free"),
        ("turnstyle-cayley", "turnstyle-cayley:N, N from 4 to 256"),
    ];
    families.extend(super::sn_families::SN_FAMILIES);
    families.extend([
        ("perm", "perm:FILE, generators in cycle notation"),
        ("tws", "tws:FILE, a twsearch/ksolve definition"),
    ]);
    families
}

/// Refuses `--metric stm` for a new job of a family with one kind of move:
/// only Loopover and `tws:` files have two metrics, and any other puzzle
/// labelled `stm` (its result folder, header and `result.json`) would be
/// its one table under a false name. Checked where a command plans a new
/// job, not in [`parse_puzzle`]: a checkpoint written before this check
/// still resumes.
pub fn check_metric_applies(spec: &str, metric: Metric) -> Result<(), SpecError> {
    let family = spec.split_once(':').map_or(spec, |(f, _)| f).to_ascii_lowercase();
    if metric == Metric::Stm && family != "loopover" && family != "tws" {
        return Err(SpecError::BadArgument {
            spec: spec.to_string(),
            why: "--metric stm applies to loopover: and tws: puzzles; the other families have one kind of move (leave --metric out)".into(),
        });
    }
    Ok(())
}

/// Parses a spec string into a puzzle under `metric` (families without a
/// choice of metric ignore it: see [`check_metric_applies`]).
pub fn parse_puzzle(spec: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    parse_puzzle_with_file(spec, metric, None)
}

/// The definition file a spec names (`perm:FILE`, `tws:FILE`), read, or
/// `None` for families without a file. Coordinators send this text to
/// workers, which may not see the file at the same path.
pub fn spec_file_text(spec: &str) -> Result<Option<String>, SpecError> {
    let (spec, _) = strip_no_symmetry(spec);
    let (spec, _, _) = split_options(&spec);
    match spec.split_once(':') {
        Some((family, path)) if matches!(family.to_ascii_lowercase().as_str(), "perm" | "tws") => {
            super::spec_text::read_spec_file(spec, super::tws::tws_file(path)).map(Some)
        }
        _ => Ok(None),
    }
}

/// Like [`parse_puzzle`], with the definition file's text given instead of
/// read from the path in the spec.
/// A spec may end with ` --directed` and then ` --track PIECES` (see
/// [`split_options`]).
pub fn parse_puzzle_with_file(spec: &str, metric: Metric, file_text: Option<&str>) -> Result<Puzzle, SpecError> {
    let (rest, no_symmetry) = strip_no_symmetry(spec);
    let (base, directed, track) = split_options(&rest);
    let puzzle = parse_family(base, metric, file_text, directed)?;
    let mut puzzle = match track {
        Some(list) => puzzle.tracked(&parse_track_list(&puzzle, list)?, list)?,
        None => puzzle,
    };
    if no_symmetry {
        puzzle.symmetries.clear();
        // The canonical order of the options, so the spec parses back to
        // this puzzle (not the text as typed, whose flag may sit elsewhere).
        let (before, track) = super::spec_text::split_track(&puzzle.spec);
        puzzle.spec = job_spec_with(before, false, true, track);
    }
    Ok(puzzle)
}

/// Parses a spec without its options.
fn parse_family(spec: &str, metric: Metric, file_text: Option<&str>, directed: bool) -> Result<Puzzle, SpecError> {
    let family = spec.split_once(':').map_or(spec, |(f, _)| f).to_ascii_lowercase();
    if directed && family != "perm" {
        return Err(SpecError::BadArgument {
            spec: spec.to_string(),
            why: "--directed applies to perm: files; the other families' moves come with their inverses".into(),
        });
    }
    let (family, args) = spec.split_once(':').unwrap_or((spec, ""));
    if !family.eq_ignore_ascii_case("tws") && args.contains(" --") {
        return Err(SpecError::BadArgument {
            spec: spec.to_string(),
            why: "options after the puzzle (--moves, --omit, --nocenters, ...) apply to tws: files".into(),
        });
    }
    match family.to_ascii_lowercase().as_str() {
        "loopover" => {
            let (rows, cols) = parse_board(spec, args, "loopover:3x3", "Loopover", MAX_POINTS)?;
            Ok(loopover(rows, cols, metric))
        }
        "sliding" => {
            let (rows, cols) = parse_board(spec, args, "sliding:4x4", "a sliding puzzle", MAX_RANKED_POINTS)?;
            Ok(sliding(rows, cols, metric))
        }
        "varikon" if args.is_empty() => Ok(varikon(metric)),
        "varikon" => Err(SpecError::BadArgument {
            spec: spec.to_string(),
            why: "varikon takes no size: it is the 2×2×2 box".into(),
        }),
        // Number 1 is pinned, so N − 1 points are ranked.
        "turnstyle" => Ok(turnstyle(parse_circle(spec, args, 1, MAX_RANKED_POINTS)?, metric)),
        "turnstyle-cayley" => Ok(turnstyle_cayley(parse_circle(spec, args, 0, MAX_POINTS)?, metric)),
        "perm" => perm_puzzle(spec, args, metric, file_text, directed),
        "tws" => tws_puzzle(spec, args, metric, file_text),
        other => super::sn_families::sn_family(spec, other, args, metric).unwrap_or_else(|| {
            Err(SpecError::UnknownFamily {
                spec: spec.to_string(),
                family: family.to_string(),
                known: known_families()
                    .iter()
                    .map(|(name, usage)| format!("{} ({})", name, usage))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }),
    }
}

/// Parses the `N` of `turnstyle:N`: at least 4 numbers, and at most `max`
/// slots once `pinned` of them are fixed.
fn parse_circle(spec: &str, arg: &str, pinned: usize, max: usize) -> Result<usize, SpecError> {
    let n: usize = arg.trim().parse().map_err(|_| SpecError::BadArgument {
        spec: spec.to_string(),
        why: "expected a whole number after the colon, e.g. turnstyle:12".into(),
    })?;
    if n < 4 {
        return Err(SpecError::TooSmall {
            spec: spec.to_string(),
            why: "Turnstyle needs at least 4 numbers on the circle".into(),
        });
    }
    check_slots(spec, Some(n - pinned), max, || {
        let family = spec.split_once(':').map_or(spec, |(f, _)| f);
        let why = if pinned > 0 {
            " (number 1 stays put; the others' arrangement is ranked in 64 bits)"
        } else {
            ""
        };
        format!("{}:N takes N from 4 to {}{}", family, max + pinned, why)
    })?;
    Ok(n)
}

/// Parses the `RxC` of a board with at least 2 rows and 2 columns and at
/// most `max` cells.
fn parse_board(
    spec: &str,
    size: &str,
    example: &'static str,
    what: &str,
    max: usize,
) -> Result<(usize, usize), SpecError> {
    let (rows, cols) = parse_grid(spec, size, example)?;
    if rows < 2 || cols < 2 {
        return Err(SpecError::TooSmall {
            spec: spec.to_string(),
            why: format!("{} needs at least 2 rows and 2 columns", what),
        });
    }
    let cells = rows.checked_mul(cols);
    check_slots(spec, cells, max, || {
        let family = spec.split_once(':').map_or(spec, |(f, _)| f);
        let why = if max == MAX_RANKED_POINTS {
            ", so that a state's rank fits in 64 bits"
        } else {
            ""
        };
        format!(
            "the board has {} cells, and {}:RxC has at most {} (R·C ≤ {}{})",
            cells.map_or_else(|| "too many".to_string(), |c| c.to_string()),
            family,
            max,
            max,
            why
        )
    })?;
    Ok((rows, cols))
}

/// Parses `RxC`.
fn parse_grid(spec: &str, size: &str, example: &'static str) -> Result<(usize, usize), SpecError> {
    let bad = || SpecError::BadSize {
        spec: spec.to_string(),
        size: size.to_string(),
        example,
    };
    let (r, c) = size
        .to_ascii_lowercase()
        .split_once('x')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(bad)?;
    let parse = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
    Ok((parse(&r)?, parse(&c)?))
}

/// Refuses more than `max` slots, saying the family's limit (`limit`).
fn check_slots(spec: &str, slots: Option<usize>, max: usize, limit: impl FnOnce() -> String) -> Result<(), SpecError> {
    match slots {
        Some(n) if n <= max => Ok(()),
        _ => Err(SpecError::TooManySlots {
            spec: spec.to_string(),
            limit: limit(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loopover() {
        let p = parse_puzzle("loopover:2x6", Metric::Mtm).unwrap();
        assert_eq!(p.slots, 12);
        assert_eq!(p.spec, "loopover:2x6");
    }

    #[test]
    fn rejects_bad_specs_with_reasons() {
        for bad in [
            "loopover:1x5",
            "loopover:2x",
            "loopover:axb",
            "loopover",
            "loopover:2x3x4",
            "cube:3",
            "loopover:100x100",
        ] {
            let err = parse_puzzle(bad, Metric::Mtm).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(bad.split(':').next().unwrap()), "{}", msg);
        }
        let msg = parse_puzzle("cube:3", Metric::Mtm).unwrap_err().to_string();
        assert!(msg.contains("known families: loopover"), "{}", msg);
    }

    #[test]
    fn new_families_parse_and_refuse_with_reasons() {
        assert_eq!(parse_puzzle("sliding:3x3", Metric::Mtm).unwrap().slots, 9);
        assert_eq!(parse_puzzle("varikon", Metric::Mtm).unwrap().slots, 8);
        assert_eq!(parse_puzzle("turnstyle:12", Metric::Mtm).unwrap().slots, 11);
        assert_eq!(parse_puzzle("turnstyle-cayley:30", Metric::Mtm).unwrap().slots, 30);
        for (bad, needle) in [
            ("sliding:1x4", "at least 2 rows"),
            (
                "sliding:5x5",
                "'sliding:5x5' is too large: the board has 25 cells, and sliding:RxC has at most 20 (R·C ≤ 20, so",
            ),
            (
                "loopover:20x20",
                "the board has 400 cells, and loopover:RxC has at most 256 (R·C ≤ 256)",
            ),
            ("sliding:3", "bad size"),
            ("varikon:3", "takes no size"),
            ("turnstyle:3", "at least 4"),
            ("turnstyle:22", "turnstyle:N takes N from 4 to 21"),
            ("turnstyle:x", "whole number"),
            ("turnstyle-cayley:300", "turnstyle-cayley:N takes N from 4 to 256"),
            ("perm:", "a file name is needed"),
            ("perm:/nonexistent/gens.txt", "/nonexistent/gens.txt: cannot read"),
            ("tws:/nonexistent/cube.tws", "/nonexistent/cube.tws: cannot read"),
        ] {
            let msg = parse_puzzle(bad, Metric::Mtm).unwrap_err().to_string();
            assert!(msg.contains(needle), "{}: {}", bad, msg);
        }
    }
}
