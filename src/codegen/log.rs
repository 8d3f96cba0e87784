//! Build logs: every location in the generated source is rewritten, those inside the user's
//! body to `body:LINE:COL` and the others to `generated:LINE:COL` (the lines of
//! `Error::source_listing`), and the source lines a compiler echoes with a line-number gutter
//! (`  713 | sum += y[i];`) get the body's line number, so the user sees their own lines.

/// Whether a location's file token names the generated source: PoCL's temporary `*.cl` path,
/// Oclgrind's `input.cl`, Intel's bare program number, `<kernel>`/`<source>`; not a header, a
/// macro scratch space (`<scratch space>`), `<built-in>` or `<command line>`.
fn is_generated_file(file: &str) -> bool {
    if file.is_empty() {
        return false;
    }
    if file.starts_with('<') {
        return matches!(file, "<kernel>" | "<source>" | "<stdin>" | "<input>");
    }
    let header = [".h", ".hpp", ".inc", ".def"]
        .iter()
        .any(|ext| file.ends_with(ext));
    !header && !file.ends_with('>')
}

/// Where a location points.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Body,
    Generated,
    Other,
}

/// One log line with every `FILE:LINE:COL` location in the generated source rewritten; the
/// place of its first location, if any.
fn map_line(l: &str, first: usize, lines: usize) -> (String, Option<Place>) {
    let b = l.as_bytes();
    let digits = |mut j: usize| {
        let s = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        (j > s).then_some(j)
    };
    let mut out = String::with_capacity(l.len());
    let mut copied = 0;
    let mut place = None;
    let mut i = 0;
    while i < b.len() {
        // FILE ':' LINE ':' COL, FILE running back to a space, '=', '(' or a quote.
        let loc = (b[i] == b':')
            .then(|| digits(i + 1))
            .flatten()
            .filter(|&j| j < b.len() && b[j] == b':')
            .and_then(|j| digits(j + 1).map(|k| (j, k)));
        let Some((j, k)) = loc else {
            i += 1;
            continue;
        };
        let start = l[..i]
            .rfind(|c: char| c.is_whitespace() || "=(\"'`".contains(c))
            .map_or(0, |p| p + 1);
        let file = &l[start..i];
        let line: usize = l[i + 1..j].parse().unwrap_or(0);
        let here = if !is_generated_file(file) {
            Place::Other
        } else if line >= first && line < first + lines {
            Place::Body
        } else {
            Place::Generated
        };
        place.get_or_insert(here);
        if here != Place::Other && start >= copied {
            out.push_str(&l[copied..start]);
            match here {
                Place::Body => out.push_str(&format!("body:{}:", line + 1 - first)),
                _ => out.push_str(&format!("generated:{line}:")),
            }
            out.push_str(&l[j + 1..k]);
            copied = k;
        }
        i = k;
    }
    out.push_str(&l[copied..]);
    (out, place)
}

/// A gutter echo `  713 | text` of a body line, renumbered to the body's line (same width).
fn map_gutter(l: &str, first: usize, lines: usize) -> Option<String> {
    let bar = l.find(" |")?;
    let num = &l[..bar];
    let n: usize = num.trim_start().parse().ok()?;
    if !num.trim_start().bytes().all(|c| c.is_ascii_digit()) || n < first || n >= first + lines {
        return None;
    }
    Some(format!("{:>w$}{}", n + 1 - first, &l[bar..], w = num.len()))
}

/// Rewrites the locations of a build log (see the module comment). Returns the mapped log and
/// whether any location fell in the body.
pub(crate) fn map_log(log: &str, first: usize, lines: usize) -> (String, bool) {
    let mut hit = false;
    // The place of the last location seen: a gutter echo belongs to it.
    let mut last = Place::Other;
    let mapped: Vec<String> = log
        .lines()
        .map(|l| {
            let (m, place) = map_line(l, first, lines);
            if let Some(p) = place {
                hit |= p == Place::Body;
                last = p;
                return m;
            }
            match last {
                Place::Other => m,
                _ => map_gutter(&m, first, lines).unwrap_or(m),
            }
        })
        .collect();
    (mapped.join("\n"), hit)
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
        assert_eq!(
            m,
            "body:3:5: error: use of undeclared identifier 'y'\nother"
        );
        let (m, hit) = map_log("<source>:10:5: error: x", 118, 3);
        assert!(!hit);
        assert_eq!(m, "generated:10:5: error: x");
    }

    /// PoCL 3.1 (this machine): a second location in the same line, inside a `<Spelling=..>`.
    #[test]
    fn every_location_of_a_line_is_mapped() {
        let log = "error: /root/.cache/pocl/kcache/tempfile_DQVYcf.cl:713:1 <Spelling=/root/.cache/pocl/kcache/tempfile_DQVYcf.cl:713:20>: too many arguments provided to function-like macro invocation\n\
                   error: /root/.cache/pocl/kcache/tempfile_x.cl:714:15: use of undeclared identifier 'zz'";
        let (m, hit) = map_log(log, 713, 2);
        assert!(hit);
        assert_eq!(
            m,
            "error: body:1:1 <Spelling=body:1:20>: too many arguments provided to function-like macro invocation\n\
             error: body:2:15: use of undeclared identifier 'zz'"
        );
    }

    /// Intel's CPU runtime 2024 (this machine): a bare program number as the file and echoes
    /// with a line-number gutter, of body lines and of generated lines.
    #[test]
    fn gutter_echoes_of_body_lines_get_body_numbers() {
        let log = "Compilation started\n\
                   7:713:20: error: too many arguments provided to function-like macro invocation\n  \
                   713 | combine(sum, x[i], 3);\n      \
                   |                    ^\n\
                   7:711:9: note: macro 'sum_combine' defined here\n  \
                   711 | #define sum_combine(v) ((*clr_r0) = clr_op_0((*clr_r0), (v)))\n      \
                   |         ^\n\
                   <scratch space>:208:1: note: expanded from here\n  \
                   208 | sum_combine\n\
                   Compilation failed";
        let (m, hit) = map_log(log, 713, 1);
        assert!(hit);
        let want = "Compilation started\n\
                    body:1:20: error: too many arguments provided to function-like macro invocation\n    \
                    1 | combine(sum, x[i], 3);\n      \
                    |                    ^\n\
                    generated:711:9: note: macro 'sum_combine' defined here\n  \
                    711 | #define sum_combine(v) ((*clr_r0) = clr_op_0((*clr_r0), (v)))\n      \
                    |         ^\n\
                    <scratch space>:208:1: note: expanded from here\n  \
                    208 | sum_combine\n\
                    Compilation failed";
        assert_eq!(m, want);
        assert!(!m.contains("713"), "{m}");
    }

    /// Oclgrind 21.10: `input.cl`, echoes without a gutter; headers stay as they are.
    #[test]
    fn oclgrind_and_headers() {
        let log = "input.cl:714:15: error: use of undeclared identifier 'zz'\n\
                   sum += x[i] + zz;\n\
                   input.cl:98:25: note: expanded from macro 'combine'\n\
                   /usr/include/clc/clc.h:714:3: note: candidate\n  \
                   714 | something";
        let (m, hit) = map_log(log, 713, 3);
        assert!(hit);
        assert_eq!(
            m,
            "body:2:15: error: use of undeclared identifier 'zz'\n\
             sum += x[i] + zz;\n\
             generated:98:25: note: expanded from macro 'combine'\n\
             /usr/include/clc/clc.h:714:3: note: candidate\n  \
             714 | something"
        );
    }

    #[test]
    fn file_tokens() {
        for f in [
            "input.cl",
            "/tmp/a/tempfile_1.cl",
            "7",
            "<kernel>",
            "<source>",
        ] {
            assert!(is_generated_file(f), "{f}");
        }
        for f in ["", "<built-in>", "space>", "line>", "opencl-c.h", "x.hpp"] {
            assert!(!is_generated_file(f), "{f}");
        }
    }
}
