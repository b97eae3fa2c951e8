//! Sizes, lists and times on the command line.

/// The most entries a list or range may expand to.
pub const MAX_ENTRIES: usize = 4096;

/// The most characters of a user's input an error message repeats.
const ECHO: usize = 80;

/// `text` as an error message repeats it: at most [`ECHO`] characters (`…` marks the cut).
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(ECHO) {
        None => text.to_string(),
        Some((i, _)) => format!("{}… ({} characters)", &text[..i], text.chars().count()),
    }
}

/// A whole number with an optional binary suffix K, M, G, T (`what` names it in messages:
/// "bytes", "processes").
fn parse_scaled(text: &str, what: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("empty: give a whole number of {what}"));
    }
    if let Some(rest) = t.strip_prefix('-')
        && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
    {
        return Err(format!(
            "`{}` is negative: a number of {what} is a whole number >= 0",
            shown(text)
        ));
    }
    // digits, then an optional suffix: K, M, G, T (optionally with `B` or `iB` after it) or
    // `B` alone
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(digits_end);
    if digits.is_empty() {
        return Err(format!(
            "`{}` is not a whole number of {what} (digits with an optional K, M, G or T)",
            shown(text)
        ));
    }
    let upper = suffix.trim_start().to_ascii_uppercase();
    let shift = match upper.as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ if suffix.starts_with(['.', 'e', 'E']) => {
            return Err(format!(
                "`{}` is not a whole number of {what} (no fractions or exponents)",
                shown(text)
            ));
        }
        _ => {
            return Err(format!(
                "`{}`: unknown suffix `{}` (use K, M, G or T, each optionally followed by B or iB)",
                shown(text),
                shown(suffix.trim_start())
            ));
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{}` does not fit in 64 bits", shown(text)))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{}` does not fit in 64 bits", shown(text)))
}

/// A byte count: digits with an optional binary suffix K, M, G, T (KiB, MiB, ...; `B`, `iB`
/// accepted after it, `B` alone after the digits).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_scaled(text, "bytes")
}

/// A number of processes (suffixes K, M, G, T as for sizes; 0 is refused where it is used,
/// naming the option).
pub fn parse_procs(text: &str) -> Result<u64, String> {
    parse_scaled(text, "processes")
}

/// A count (a whole number, suffixes K, M, G, T).
pub fn parse_count(text: &str) -> Result<u64, String> {
    parse_scaled(text, "blocks")
}

/// A list of values, strictly increasing.
#[derive(Debug, Clone, PartialEq)]
pub struct List(pub Vec<u64>);

/// `a,b,c` (each with size suffixes) or `lo..hi` (doubling from `lo`, `hi` included if reached
/// or added as the last entry).
pub fn parse_list(text: &str) -> Result<List, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty: give a list (4,16,64) or a doubling range (2..1024)".into());
    }
    let item = |x: &str| {
        parse_scaled(x, "values").map_err(|e| {
            if x.trim().is_empty() {
                format!(
                    "`{}`: an empty entry (two commas, or one at an end)",
                    shown(text)
                )
            } else {
                e.replace("a number of values is", "an entry is")
                    .replace("of values", "")
            }
        })
    };
    let mut values = if let Some((lo, hi)) = t.split_once("..") {
        if hi.contains("..") || lo.contains(',') || hi.contains(',') {
            return Err(format!(
                "`{}`: a range is START..END (one `..`, no commas); a list is A,B,C",
                shown(text)
            ));
        }
        if lo.trim().is_empty() || hi.trim().is_empty() {
            return Err(format!(
                "`{}`: a range needs both ends, START..END (2..1024)",
                shown(text)
            ));
        }
        let (lo, hi) = (item(lo)?, item(hi)?);
        if lo == 0 || lo > hi {
            return Err(format!("`{}`: a range needs 0 < start <= end", shown(text)));
        }
        let mut v = Vec::new();
        let mut x = lo;
        while x < hi && v.len() < MAX_ENTRIES {
            v.push(x);
            x = x.saturating_mul(2);
        }
        v.push(hi);
        v
    } else {
        let entries = t.split(',').count();
        if entries > MAX_ENTRIES {
            return Err(format!(
                "`{}`: {entries} entries, more than {MAX_ENTRIES}",
                shown(text)
            ));
        }
        t.split(',')
            .map(item)
            .collect::<Result<Vec<u64>, String>>()?
    };
    if values.len() > MAX_ENTRIES {
        return Err(format!(
            "`{}`: more than {MAX_ENTRIES} entries",
            shown(text)
        ));
    }
    values.sort_unstable();
    values.dedup();
    Ok(List(values))
}

/// A time: a non-negative decimal number with an optional unit `s`, `ms`, `us` (or `µs`), `ns`,
/// `ps`; a bare number is seconds (`1us` = `1e-6` = `0.001ms`). At most
/// [`MAX_SECONDS`](commcost::limits::MAX_SECONDS) (1e9 s), the bound of every model's time
/// parameters, so that no result overflows; nonzero times below 1e-300 s are refused as well
/// (they are never a measurement).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, scale) = [
        ("ps", 1e-12),
        ("ns", 1e-9),
        ("µs", 1e-6),
        ("us", 1e-6),
        ("ms", 1e-3),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|&(unit, scale)| t.strip_suffix(unit).map(|n| (n.trim_end(), scale)))
    .unwrap_or((t, 1.0));
    let not_a_time = || {
        format!(
            "`{}` is not a time (a number with an optional unit s, ms, us, ns, ps)",
            shown(text)
        )
    };
    // only plain decimal numbers: Rust also reads `inf`, `NaN` and `infinity`
    if number.is_empty()
        || !number
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return Err(not_a_time());
    }
    let value: f64 = number.parse().map_err(|_| not_a_time())?;
    let seconds = value * scale;
    if seconds < 0.0 {
        return Err(format!(
            "`{}` is negative: a time must be >= 0",
            shown(text)
        ));
    }
    let max = commcost::limits::MAX_SECONDS;
    // (a NaN is not a plain decimal number: refused above)
    if seconds > max || seconds.is_nan() {
        return Err(format!(
            "`{}` is more than {max:e} s, the largest time accepted",
            shown(text)
        ));
    }
    if seconds != 0.0 && seconds < 1e-300 {
        return Err(format!(
            "`{}` is below 1e-300 s: give 0 or a measurable time",
            shown(text)
        ));
    }
    Ok(seconds)
}

/// Seconds in the unit that reads best: ns, µs, ms or s.
pub fn human_time(seconds: f64) -> String {
    let a = seconds.abs();
    if !seconds.is_finite() {
        format!("{seconds}")
    } else if a == 0.0 {
        "0 s".into()
    } else if a < 1e-6 {
        format!("{:.3} ns", seconds * 1e9)
    } else if a < 1e-3 {
        format!("{:.3} µs", seconds * 1e6)
    } else if a < 1.0 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{seconds:.3} s")
    }
}

/// Bytes with a binary suffix when exact (`4096` → `4K`).
pub fn human_bytes(bytes: u64) -> String {
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_lists() {
        assert_eq!(parse_bytes("64"), Ok(64));
        assert_eq!(parse_bytes("4K"), Ok(4096));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert!(parse_bytes("1X").is_err());
        assert!(parse_bytes("99999999999T").is_err());
        assert_eq!(parse_list("2..16"), Ok(List(vec![2, 4, 8, 16])));
        assert_eq!(parse_list("3..10"), Ok(List(vec![3, 6, 10])));
        assert_eq!(parse_list("64,4,16"), Ok(List(vec![4, 16, 64])));
        assert!(parse_list("0..4").is_err());
        assert_eq!(human_bytes(4096), "4K");
        assert_eq!(human_bytes(1000), "1000");
        assert_eq!(human_time(82.90105e-6), "82.901 µs");
        assert_eq!(parse_seconds("1us"), Ok(1e-6));
        assert_eq!(parse_seconds("2.5 ms"), Ok(2.5e-3));
        assert_eq!(parse_seconds("3"), Ok(3.0));
        assert_eq!(parse_seconds("7µs"), Ok(7e-6));
        assert!(parse_seconds("1h").is_err());
        assert!(parse_seconds("-1us").is_err());
        assert!(parse_seconds("inf").is_err());
        assert!(parse_seconds("").is_err());
        assert!(parse_seconds("1e307s").is_err());
        assert!(parse_seconds("NaN").is_err());
        assert!(parse_seconds("1e10").is_err());
        assert!(parse_seconds("1e9").is_ok());
        assert!(parse_bytes("4iB").is_err());
        assert!(
            parse_bytes("NaN")
                .unwrap_err()
                .contains("not a whole number")
        );
        assert!(parse_bytes("-1").unwrap_err().contains("negative"));
        assert_eq!(parse_bytes("4KiB"), Ok(4096));
        assert_eq!(parse_bytes("4B"), Ok(4));
        assert_eq!(parse_bytes("4 K"), Ok(4096));
        assert!(parse_list("").is_err());
        assert!(parse_list("2..4..8").unwrap_err().contains("one `..`"));
        assert!(parse_list("1,,2").unwrap_err().contains("empty entry"));
        assert!(parse_list("2..").unwrap_err().contains("both ends"));
        assert!(parse_list("..8").unwrap_err().contains("both ends"));
        let long = "9".repeat(10_000);
        assert!(parse_bytes(&long).unwrap_err().len() < 200);
        assert!(parse_procs("-4").unwrap_err().contains("negative"));
    }
}
