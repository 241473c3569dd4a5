//! Command-line parsing shared by `cayley` and `cayley-worker`: a bad
//! argument is one `error:` line and exit status 1, like every other bad
//! input, instead of clap's multi-line report and status 2.

use clap::error::ErrorKind;
use clap::Parser;

/// Parses this process's arguments into `T`. `--help` and `--version` print
/// and exit 0 as usual; any other problem prints [`one_line`] of clap's
/// report on stderr and exits with status 1.
pub fn parse_args<T: Parser>() -> T {
    match T::try_parse() {
        Ok(args) => args,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                eprintln!("{}", one_line(&e.render().to_string()));
                std::process::exit(1);
            }
        },
    }
}

/// Value parser of counts that must be at least 1 (threads, workers,
/// nodes, seconds): `--threads 0` is refused, not taken to mean something.
pub fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, String> {
    match text.trim().parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        _ => Err(format!("'{}' is not a whole number of at least 1", text)),
    }
}

/// Clap's report in one line: its paragraphs joined with `; `, each one's
/// lines with spaces, without the usage and "For more information" lines
/// (they say `--help`, which the line then says once).
pub fn one_line(report: &str) -> String {
    let paragraphs: Vec<String> = report
        .split("\n\n")
        .filter(|p| {
            let p = p.trim_start();
            !p.is_empty() && !p.starts_with("Usage:") && !p.starts_with("For more information")
        })
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let line = paragraphs.join("; ");
    let line = if line.starts_with("error:") {
        line
    } else {
        format!("error: {}", line)
    };
    format!("{} (see --help)", line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_start_at_one() {
        assert_eq!(at_least_one::<u32>("3"), Ok(3));
        for bad in ["0", "-1", "two", ""] {
            assert!(at_least_one::<u32>(bad).unwrap_err().contains("at least 1"), "{}", bad);
        }
    }

    #[test]
    fn reports_become_one_line_without_usage() {
        let report = "error: invalid value 'lots' for '--memory <SIZE>': bad size 'lots'\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(report),
            "error: invalid value 'lots' for '--memory <SIZE>': bad size 'lots' (see --help)"
        );
        let report = "error: the following required arguments were not provided:\n  --out <DIR>\n\nUsage: cayley serve --out <DIR> <PUZZLE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(report),
            "error: the following required arguments were not provided: --out <DIR> (see --help)"
        );
        let report = "error: unexpected argument '--thread' found\n\n  tip: a similar argument exists: '--threads'\n\nUsage: cayley run <PUZZLE>\n";
        assert_eq!(
            one_line(report),
            "error: unexpected argument '--thread' found; tip: a similar argument exists: '--threads' (see --help)"
        );
    }
}
