//! Build logs: locations inside the user's body are rewritten to `body:LINE:COL`.

/// Rewrites `file:LINE:COL` locations inside the body to `body:LINE:COL`, so a build log points
/// at the user's own lines. Returns the mapped log and whether any location fell in the body.
pub(crate) fn map_log(log: &str, first: usize, lines: usize) -> (String, bool) {
    let mut hit = false;
    let mapped = log
        .lines()
        .map(|l| {
            // Find the first ":<digits>:" and map it when inside the body.
            let bytes = l.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b':' {
                    let start = i + 1;
                    let mut j = start;
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                    if j > start && j < bytes.len() && bytes[j] == b':' {
                        if let Ok(n) = l[start..j].parse::<usize>() {
                            if n >= first && n < first + lines {
                                hit = true;
                                let prefix_end = l[..i]
                                    .rfind(|c: char| c.is_whitespace())
                                    .map(|p| p + 1)
                                    .unwrap_or(0);
                                return format!(
                                    "{}body:{}{}",
                                    &l[..prefix_end],
                                    n - first + 1,
                                    &l[j..]
                                );
                            }
                        }
                        break;
                    }
                }
                i += 1;
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    (mapped, hit)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn log_lines_map_to_the_body() {
        let (m, hit) = map_log(
            "<source>:120:5: error: use of undeclared identifier 'y'\nother",
            118,
            3,
        );
        assert!(hit);
        assert!(m.starts_with("body:3:5: error"), "{m}");
        let (_, hit) = map_log("<source>:10:5: error: x", 118, 3);
        assert!(!hit);
    }
}
