//! Parsing of puzzle specs such as `loopover:2x6`.

use super::{loopover::loopover, Metric, Puzzle};
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
    #[error("'{spec}' has {slots} slots; this build handles at most {max}")]
    TooManySlots { spec: String, slots: usize, max: usize },
}

/// Families this build understands, with their spec syntax.
pub fn known_families() -> &'static [(&'static str, &'static str)] {
    &[("loopover", "loopover:RxC, R and C at least 2")]
}

/// Parses a spec string into a puzzle under `metric`.
pub fn parse_puzzle(spec: &str, metric: Metric) -> Result<Puzzle, SpecError> {
    let spec = spec.trim();
    let (family, args) = spec.split_once(':').unwrap_or((spec, ""));
    match family.to_ascii_lowercase().as_str() {
        "loopover" => {
            let (rows, cols) = parse_grid(spec, args, "loopover:3x3")?;
            if rows < 2 || cols < 2 {
                return Err(SpecError::TooSmall {
                    spec: spec.to_string(),
                    why: "Loopover needs at least 2 rows and 2 columns".into(),
                });
            }
            check_slots(spec, rows.checked_mul(cols))?;
            Ok(loopover(rows, cols, metric))
        }
        _ => Err(SpecError::UnknownFamily {
            spec: spec.to_string(),
            family: family.to_string(),
            known: known_families()
                .iter()
                .map(|(name, usage)| format!("{} ({})", name, usage))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
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

/// Points are stored as bytes, so a puzzle has at most 256 slots.
fn check_slots(spec: &str, slots: Option<usize>) -> Result<(), SpecError> {
    const MAX: usize = 256;
    match slots {
        Some(n) if n <= MAX => Ok(()),
        other => Err(SpecError::TooManySlots {
            spec: spec.to_string(),
            slots: other.unwrap_or(usize::MAX),
            max: MAX,
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
}
