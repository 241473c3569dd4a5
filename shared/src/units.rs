//! Sizes as people write and read them: `8G` on the command line,
//! `1.5 GiB` in messages. Every stage may use it; it uses nothing.

/// `1.5 GiB`-style sizes.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 9] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{} B", bytes)
    } else {
        format!("{:.1} {}", value, UNITS[unit])
    }
}

/// Parses sizes such as `512M`, `8G`, `1.5GiB`, `3000000` (bytes); `k`, `m`,
/// `g`, `t` are powers of 1024 with or without `iB`/`B`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!(
            "bad size '{}': expected a number with an optional unit, e.g. 8G or 512M",
            text
        )
    })?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "bad size '{}': unknown unit '{}' (use K, M, G or T)",
                text, other
            ))
        }
    };
    let bytes = value * scale as f64;
    if bytes < 1.0 {
        return Err(format!("bad size '{}': a size is at least 1 byte", text));
    }
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("bad size '{}': too large (at most 16 EiB)", text));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").unwrap_err().contains("bad size"));
        assert!(parse_size("3X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").unwrap_err().contains("at least 1 byte"));
        assert!(parse_size("0.1").unwrap_err().contains("at least 1 byte"));
        assert!(parse_size("99999999T").unwrap_err().contains("too large"));
        assert!(parse_size("1e3").unwrap_err().contains("unknown unit"));
    }
}
