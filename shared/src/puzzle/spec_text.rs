//! The text of a job's spec string and what can go wrong reading it: the
//! options that ride in it (` --directed`, ` --no-symmetry`, ` --track
//! LIST`), so that workers and `resume` rebuild the same puzzle from the
//! string alone; the definition file it names; and [`SpecError`]. Every
//! other puzzle module may use it; it uses none of them.

use thiserror::Error;

/// A puzzle spec that cannot be turned into a puzzle.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("unknown puzzle family '{family}' in '{spec}'; known families: {known}")]
    UnknownFamily {
        spec: String,
        family: String,
        known: String,
    },
    #[error("bad size '{size}' in '{spec}': expected ROWSxCOLS with whole numbers, e.g. {example}")]
    BadSize {
        spec: String,
        size: String,
        example: &'static str,
    },
    #[error("'{spec}' is too small: {why}")]
    TooSmall { spec: String, why: String },
    /// Beyond the family's size limit, which `limit` states.
    #[error("'{spec}' is too large: {limit}")]
    TooManySlots { spec: String, limit: String },
    #[error("bad argument in '{spec}': {why}")]
    BadArgument { spec: String, why: String },
    /// A definition too large to build as a puzzle; its group can still be
    /// computed (`cayley info`).
    #[error("'{spec}' has {points} points (pieces × orientations); puzzles are built with at most {max}")]
    TooManyPoints { spec: String, points: usize, max: usize },
    /// A puzzle file that cannot be read or parsed; `line` is 1-based.
    #[error("{path}{}: {why}", line_suffix(.line))]
    BadFile {
        path: String,
        line: Option<usize>,
        why: String,
    },
}

/// `:12` for line 12, nothing for a whole-file problem.
fn line_suffix(line: &Option<usize>) -> String {
    line.map_or(String::new(), |l| format!(":{}", l))
}

/// Separator between a puzzle spec and its tracked pieces inside a job's
/// spec string (`loopover:4x4 --track 1-8`), so workers and `resume`
/// rebuild the same puzzle from the spec alone.
pub const TRACK_SEPARATOR: &str = " --track ";

/// Splits `spec` into the puzzle spec and the tracked-pieces list, if any.
pub fn split_track(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once(TRACK_SEPARATOR) {
        Some((base, list)) => (base.trim(), Some(list.trim())),
        None => (spec.trim(), None),
    }
}

/// Option of a job's spec string that turns symmetry reduction off.
pub const NO_SYMMETRY_FLAG: &str = " --no-symmetry";

/// The spec without ` --no-symmetry`, and whether it was there. Like
/// ` --directed`, the flag is recognised only where [`job_spec_with`] puts
/// it: at the end of the spec, before ` --track LIST`.
pub fn strip_no_symmetry(spec: &str) -> (String, bool) {
    let (before, track) = split_track(spec);
    match before.strip_suffix(NO_SYMMETRY_FLAG) {
        Some(base) => (job_spec(base, false, track), true),
        None => (spec.to_string(), false),
    }
}

/// Suffix of a job's spec string for a directed generator set.
pub const DIRECTED_FLAG: &str = " --directed";

/// Splits a job's spec string into the puzzle spec, the directed flag and
/// the tracked-pieces list. The options ride in the spec string so that
/// workers and `resume` rebuild exactly the same puzzle from it.
pub fn split_options(spec: &str) -> (&str, bool, Option<&str>) {
    let (rest, track) = split_track(spec);
    match rest.strip_suffix(DIRECTED_FLAG.trim_start()) {
        Some(base) if base.ends_with(' ') => (base.trim(), true, track),
        _ => (rest, false, track),
    }
}

/// The spec string of a job from its parts (the inverse of [`split_options`]
/// and [`strip_no_symmetry`]).
pub fn job_spec(puzzle: &str, directed: bool, track: Option<&str>) -> String {
    job_spec_with(puzzle, directed, false, track)
}

/// [`job_spec`] with symmetry reduction turned off when `no_symmetry`.
pub fn job_spec_with(puzzle: &str, directed: bool, no_symmetry: bool, track: Option<&str>) -> String {
    let mut spec = puzzle.trim().to_string();
    if directed {
        spec.push_str(DIRECTED_FLAG);
    }
    if no_symmetry {
        spec.push_str(NO_SYMMETRY_FLAG);
    }
    if let Some(list) = track {
        spec.push_str(TRACK_SEPARATOR);
        spec.push_str(list.trim());
    }
    spec
}

/// Reads a puzzle definition file, or says why it cannot.
pub fn read_spec_file(spec: &str, path: &str) -> Result<String, SpecError> {
    if path.is_empty() {
        return Err(SpecError::BadArgument {
            spec: spec.to_string(),
            why: "a file name is needed after the colon, e.g. perm:gens.txt or tws:cube.tws".into(),
        });
    }
    std::fs::read_to_string(path).map_err(|e| SpecError::BadFile {
        path: path.to_string(),
        line: None,
        why: format!("cannot read: {}", e),
    })
}
