//! Options of a `.tws` puzzle, as twsearch users know them, written after
//! the file name in the spec so that workers and `resume` rebuild the same
//! puzzle: `tws:FILE --moves U,R2,F --omit CENTERS --nocorners`.
//!
//! - `--moves LIST`: only these moves, twsearch's way: a base move (`U`)
//!   brings all its powers, a power (`R2`) only its own multiples;
//! - `--omit SETS`: leave these sets out (comma-separated names);
//! - `--nocenters`, `--nocorners`, `--noedges`: leave out the sets whose
//!   names twsearch recognises as such (starting with `ce`; `c?r`; `ed`).

use crate::puzzle::SpecError;

/// The options after a `.tws` file name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TwsOptions {
    /// Moves to keep (`--moves`), as written.
    pub moves: Option<Vec<String>>,
    /// Sets to leave out by name (`--omit`).
    pub omit: Vec<String>,
    pub no_centers: bool,
    pub no_corners: bool,
    pub no_edges: bool,
}

/// The file name of a `tws:` argument and its options.
pub fn split_tws_args(spec: &str, args: &str) -> Result<(String, TwsOptions), SpecError> {
    let bad = |why: String| SpecError::BadArgument {
        spec: spec.to_string(),
        why,
    };
    let mut parts = args.split(" --");
    let path = parts.next().unwrap_or("").trim().to_string();
    let mut options = TwsOptions::default();
    for part in parts {
        let (flag, value) = match part.trim().split_once(' ') {
            Some((f, v)) => (f, Some(v.trim())),
            None => (part.trim(), None),
        };
        let list = |v: Option<&str>| -> Result<Vec<String>, SpecError> {
            let items: Vec<String> = v.unwrap_or("").split(',').map(|s| s.trim().to_string()).collect();
            if items.iter().any(|s| s.is_empty()) {
                return Err(bad(format!("--{} needs a comma-separated list", flag)));
            }
            Ok(items)
        };
        let no_value = |set: &mut bool| match value {
            None => {
                *set = true;
                Ok(())
            }
            Some(v) => Err(bad(format!("--{} takes no value, found '{}'", flag, v))),
        };
        match flag {
            "moves" if options.moves.is_none() => options.moves = Some(list(value)?),
            "omit" => options.omit.extend(list(value)?),
            "nocenters" => no_value(&mut options.no_centers)?,
            "nocorners" => no_value(&mut options.no_corners)?,
            "noedges" => no_value(&mut options.no_edges)?,
            "moves" => return Err(bad("--moves is given twice".into())),
            other => {
                return Err(bad(format!(
                    "unknown option --{} for a tws: file (known: --moves, --omit, --nocenters, --nocorners, --noedges)",
                    other
                )))
            }
        }
    }
    Ok((path, options))
}

impl TwsOptions {
    /// The options as written after the file name (empty when none).
    pub fn suffix(&self) -> String {
        let mut out = String::new();
        if let Some(moves) = &self.moves {
            out += &format!(" --moves {}", moves.join(","));
        }
        if !self.omit.is_empty() {
            out += &format!(" --omit {}", self.omit.join(","));
        }
        for (on, flag) in [
            (self.no_centers, " --nocenters"),
            (self.no_corners, " --nocorners"),
            (self.no_edges, " --noedges"),
        ] {
            if on {
                out += flag;
            }
        }
        out
    }

    /// True when the set `name` is left out.
    pub fn omits(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        let b = lower.as_bytes();
        self.omit.iter().any(|o| o == name)
            || (self.no_centers && lower.starts_with("ce"))
            || (self.no_corners && b.len() >= 3 && b[0] == b'c' && b[2] == b'r')
            || (self.no_edges && lower.starts_with("ed"))
    }

    /// Names given to `--omit`.
    pub fn omitted_names(&self) -> impl Iterator<Item = &String> {
        self.omit.iter()
    }

    /// True when some set may be left out.
    pub fn omits_any(&self) -> bool {
        !self.omit.is_empty() || self.no_centers || self.no_corners || self.no_edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip_and_name_sets_as_twsearch_does() {
        let (path, o) = split_tws_args("tws:c.tws", "c.tws --moves U,R2 --omit EDGES --nocenters").unwrap();
        assert_eq!(path, "c.tws");
        assert_eq!(o.moves, Some(vec!["U".to_string(), "R2".to_string()]));
        assert_eq!(o.suffix(), " --moves U,R2 --omit EDGES --nocenters");
        assert!(o.omits("EDGES") && o.omits("CENTERS") && o.omits("Centers2"));
        assert!(!o.omits("CORNERS") && !o.omits("Edges2"));
        let (_, o) = split_tws_args("s", "f --nocorners --noedges").unwrap();
        assert!(o.omits("CORNERS") && o.omits("Corner") && o.omits("EDGES") && !o.omits("CENTERS"));
        for bad in [
            "f --moves",
            "f --moves U,,R",
            "f --frobnicate",
            "f --nocenters yes",
            "f --moves U --moves R",
        ] {
            assert!(split_tws_args("s", bad).is_err(), "{}", bad);
        }
    }
}
