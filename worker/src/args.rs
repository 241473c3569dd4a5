//! Command-line parsing shared by `cayley` and `cayley-worker`: a bad
//! argument is one `error:` line and exit status 1, like every other bad
//! input, instead of clap's multi-line report and status 2.

use clap::error::ErrorKind;
use clap::Parser;

/// Parses this process's arguments into `T`. `--help` and `--version` print
/// and exit 0 as usual; a missing subcommand prints the help on stderr and
/// exits with status 1; any other problem prints [`one_line`] of clap's
/// report on stderr and exits with status 1.
pub fn parse_args<T: Parser>() -> T {
    match T::try_parse() {
        Ok(args) => args,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
            // `cayley` alone: the help, on stderr, and status 1 as for any
            // other incomplete command line (clap's own status is 2).
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                eprint!("{}", e.render());
                std::process::exit(1);
            }
            _ => {
                eprintln!("{}", one_line(&e.render().to_string()));
                std::process::exit(1);
            }
        },
    }
}

/// The whole-number types of the options, with their largest value.
pub trait Whole: std::str::FromStr + PartialOrd + From<u8> + std::fmt::Display {
    const MAX: Self;
}

impl Whole for u32 {
    const MAX: Self = u32::MAX;
}

impl Whole for u64 {
    const MAX: Self = u64::MAX;
}

impl Whole for usize {
    const MAX: Self = usize::MAX;
}

/// Value parser of counts that must be at least 1 (threads, workers,
/// nodes, seconds): `--threads 0` is refused, not taken to mean something.
pub fn at_least_one<T: Whole>(text: &str) -> Result<T, String> {
    let not_one = || format!("'{}' is not a whole number of at least 1", text);
    match text.trim().parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        Ok(_) => Err(not_one()),
        Err(_) => Err(too_large::<T>(text).unwrap_or_else(not_one)),
    }
}

/// Value parser of counts that may be 0 (depths, antipodes, seconds):
/// `-1` or `two` is refused with the flag's name, not taken by clap for an
/// unknown option (its tip "to pass '-1' as a value, use '-- -1'" was the
/// whole message).
pub fn whole_number<T: Whole>(text: &str) -> Result<T, String> {
    text.trim()
        .parse::<T>()
        .map_err(|_| too_large::<T>(text).unwrap_or_else(|| format!("'{}' is not a whole number (0, 1, 2, ...)", text)))
}

/// The message for digits past `T`'s largest value: they are a whole
/// number, and "not a whole number" sent the user looking for a typo.
fn too_large<T: Whole>(text: &str) -> Option<String> {
    let digits = text.trim();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("'{}' is too large: at most {}", digits, T::MAX))
}

/// Value parser of a coordinator's URL: `http://` or `https://`, a host
/// and a port. Without a scheme the gRPC client could not use it, and a
/// worker retried it for its whole patience (300 s) before saying so.
pub fn coordinator_url(text: &str) -> Result<String, String> {
    let text = text.trim();
    let Some(rest) = text.strip_prefix("http://").or_else(|| text.strip_prefix("https://")) else {
        return Err(format!(
            "'{}' is not a coordinator URL: write it with its scheme, e.g. http://{} (https:// with TLS)",
            text,
            if text.contains("://") { "HOST:7070" } else { text }
        ));
    };
    let authority = rest.split('/').next().unwrap_or("");
    let port_ok = authority
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if !port_ok {
        return Err(format!(
            "'{}' has no host and port: write it as http://HOST:PORT (cayley serve listens on 7070 unless told otherwise)",
            text
        ));
    }
    Ok(text.to_string())
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
    fn coordinator_urls_need_a_scheme_a_host_and_a_port() {
        assert_eq!(
            coordinator_url("http://10.0.0.5:7070"),
            Ok("http://10.0.0.5:7070".into())
        );
        assert!(coordinator_url("https://head.cluster:443").is_ok());
        assert!(coordinator_url("http://[::1]:7070").is_ok());
        let e = coordinator_url("127.0.0.1:47999").unwrap_err();
        assert!(e.contains("e.g. http://127.0.0.1:47999"), "{}", e);
        assert!(coordinator_url("ftp://host:1")
            .unwrap_err()
            .contains("http://HOST:7070"));
        assert!(coordinator_url("http://head").unwrap_err().contains("no host and port"));
    }

    #[test]
    fn whole_numbers_start_at_zero() {
        assert_eq!(whole_number::<u32>("0"), Ok(0));
        assert!(whole_number::<u32>("-1").unwrap_err().contains("not a whole number"));
    }

    #[test]
    fn numbers_past_the_type_say_how_large_they_may_be() {
        // 2^32: a whole number, one past u32's largest.
        let e = at_least_one::<u32>("4294967296").unwrap_err();
        assert_eq!(e, "'4294967296' is too large: at most 4294967295");
        assert_eq!(at_least_one::<u32>("4294967295"), Ok(u32::MAX));
        let e = whole_number::<u64>("18446744073709551616").unwrap_err();
        assert!(e.contains("at most 18446744073709551615"), "{}", e);
        assert!(whole_number::<u32>("12x").unwrap_err().contains("not a whole number"));
    }

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
