//! Sizes and byte counts of `clreduce bench`: parsing `--sizes`, `--max-n` and `--llc` (N,
//! 2^K, 2^A..2^B, K/M/G suffixes) and printing them back (2^K, KiB/MiB/GiB).

/// A size: N (underscores allowed) or 2^K, K up to 40.
pub fn parse_n(s: &str) -> std::result::Result<u64, String> {
    let s = s.trim();
    let bad = || format!("bad size {s:?} (expected N or 2^K)");
    if let Some(k) = s.strip_prefix("2^") {
        let k: u32 = k.parse().map_err(|_| bad())?;
        if k > 40 {
            return Err(bad());
        }
        Ok(1u64 << k)
    } else {
        s.replace('_', "").parse().map_err(|_| bad())
    }
}

/// `--sizes`: a comma list of N, 2^K or 2^A..2^B (every power of two between), sorted and
/// without repeats or zeros.
pub fn parse_sizes(s: &str) -> std::result::Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        if let Some((a, b)) = part.split_once("..") {
            let (a, b) = (parse_n(a)?, parse_n(b)?);
            if !a.is_power_of_two() || !b.is_power_of_two() || a > b {
                return Err(format!(
                    "bad size range {part:?} (expected 2^A..2^B with A <= B)"
                ));
            }
            let mut x = a;
            while x <= b {
                out.push(x);
                x <<= 1;
            }
        } else {
            out.push(parse_n(part)?);
        }
    }
    out.retain(|&n| n > 0);
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("no sizes".into());
    }
    Ok(out)
}

/// A size as 2^K when it is a power of two, else in decimal.
pub fn fmt_n(n: u64) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// Bytes in KiB, MiB or GiB.
pub fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b as f64 / 1024.0)
    }
}

/// Bytes: N, 2^K, or N with a K, M or G suffix (binary).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim().trim_end_matches("iB").trim_end_matches('B');
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    parse_n(num)
        .map(|x| x * mult)
        .map_err(|_| format!("bad byte count {s:?} (expected N, 2^K, or N with K, M or G)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_sizes("2^10..2^12").unwrap(), vec![1024, 2048, 4096]);
        assert_eq!(parse_sizes("1000,2^4,1000").unwrap(), vec![16, 1000]);
        assert!(parse_sizes("2^12..2^10").is_err());
        assert!(parse_sizes("x").is_err());
        assert_eq!(parse_n("2^22").unwrap(), 1 << 22);
        assert_eq!(parse_bytes("50M").unwrap(), 50 << 20);
        assert_eq!(parse_bytes("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_bytes("2^20").unwrap(), 1 << 20);
    }
}
