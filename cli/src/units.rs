//! Sizes, lists and times on the command line.

/// The most entries a list or range may expand to.
const MAX_ENTRIES: usize = 4096;

/// A byte count: digits with an optional binary suffix K, M, G, T (KiB, MiB, ...; `B`, `iB`
/// accepted after it).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => {
                    return Err(format!(
                        "`{text}`: unknown size suffix `{c}` (use K, M, G, T)"
                    ));
                }
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of bytes"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` does not fit in 64 bits"))
}

/// A list of values, strictly increasing.
#[derive(Debug, Clone, PartialEq)]
pub struct List(pub Vec<u64>);

/// `a,b,c` (each with size suffixes) or `lo..hi` (doubling from `lo`, `hi` included if reached
/// or added as the last entry).
pub fn parse_list(text: &str) -> Result<List, String> {
    let mut values = if let Some((lo, hi)) = text.split_once("..") {
        let (lo, hi) = (parse_bytes(lo)?, parse_bytes(hi)?);
        if lo == 0 || lo > hi {
            return Err(format!("`{text}`: a range needs 0 < start <= end"));
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
        text.split(',')
            .map(parse_bytes)
            .collect::<Result<Vec<u64>, String>>()?
    };
    if values.len() > MAX_ENTRIES {
        return Err(format!("`{text}`: more than {MAX_ENTRIES} entries"));
    }
    values.sort_unstable();
    values.dedup();
    Ok(List(values))
}

/// A time: a non-negative decimal number with an optional unit `s`, `ms`, `us` (or `µs`), `ns`,
/// `ps`; a bare number is seconds (`1us` = `1e-6` = `0.001ms`).
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
    let value: f64 = number.parse().map_err(|_| {
        format!("`{text}` is not a time (a number with an optional unit s, ms, us, ns, ps)")
    })?;
    let seconds = value * scale;
    if !(seconds >= 0.0 && seconds.is_finite()) {
        return Err(format!("`{text}`: a time must be finite and >= 0"));
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
    }
}
