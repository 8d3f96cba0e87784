//! Names in the user's body, read lexically: whole-identifier matching, valid identifiers, the
//! reducer shorthands an op allows (`sum += v` for plus, ...), and the rewrite of span
//! subscripts (`hist[k] += v` becomes `hist_combine(k, v)`).

use crate::error::{Error, Result};
use crate::ops::Operator;

/// Whether `word` occurs in `body` as a whole identifier.
pub(crate) fn mentions(body: &str, word: &str) -> bool {
    let b = body.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    body.match_indices(word).any(|(p, _)| {
        (p == 0 || !is_word(b[p - 1])) && b.get(p + word.len()).is_none_or(|&c| !is_word(c))
    })
}
pub(crate) fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Checks the reducer shorthands in the body against what each op allows.
pub(crate) fn check_shorthands(body: &str, name: &str, op: &Operator) -> Result<()> {
    let allowed = op.shorthands();
    let b = body.as_bytes();
    let mut pos = 0;
    while let Some(off) = body[pos..].find(name) {
        let start = pos + off;
        let end = start + name.len();
        pos = end;
        let before_ok =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        let after_ok = end == b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if !before_ok || !after_ok {
            continue;
        }
        let rest = body[end..].trim_start();
        let pre = body[..start].trim_end();
        for opstr in [
            "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=", "<<=", ">>=", "++", "--",
        ] {
            let used =
                rest.starts_with(opstr) || (matches!(opstr, "++" | "--") && pre.ends_with(opstr));
            // A plain `r = v` would overwrite the work-item's accumulator: never allowed.
            if rest.starts_with('=') && !rest.starts_with("==") {
                return Err(Error::ReducerOperator {
                    name: name.to_string(),
                    operator: "=".into(),
                    op: op.to_string(),
                });
            }
            if used && !allowed.contains(&opstr) {
                return Err(Error::ReducerOperator {
                    name: name.to_string(),
                    operator: opstr.to_string(),
                    op: op.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Skips a comment starting at `i` (if any); returns the index after it.
fn skip_comment(b: &[u8], i: usize) -> Option<usize> {
    if b[i..].starts_with(b"//") {
        Some(
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p),
        )
    } else if b[i..].starts_with(b"/*") {
        Some(
            b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2),
        )
    } else {
        None
    }
}

/// The first use of `name` as a whole identifier at or after byte `from`, outside comments.
pub(super) fn next_use(b: &[u8], from: usize, name: &str) -> Option<usize> {
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = from;
    while i < b.len() {
        if let Some(j) = skip_comment(b, i) {
            i = j;
            continue;
        }
        if b[i..].starts_with(name.as_bytes())
            && (i == 0 || !is_word(b[i - 1]))
            && b.get(i + name.len()).is_none_or(|&c| !is_word(c))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The end of a balanced expression starting at `i`: the first `;`, `,` or unmatched closing
/// bracket at depth 0 (or `close` itself when it is the matching bracket).
pub(super) fn expr_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < b.len() {
        if let Some(j) = skip_comment(b, i) {
            i = j;
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            b';' | b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Rewrites the subscripted uses of span reducers into calls the generated code defines:
/// `hist[b] += v`, `hist[b]++`, `++hist[b]` and `combine(hist[b], v)` become
/// `hist_combine((b), ...)`; `hist_combine(b, v)` is left as it is. Line breaks are kept, so
/// build-log lines still map to the body. Any other use of a span reducer is an error: a
/// reducer is write-only.
pub(crate) fn rewrite_spans(body: &str, spans: &[(&str, &Operator)]) -> Result<String> {
    let mut out = body.to_string();
    for &(name, op) in spans {
        let b = out.clone().into_bytes();
        let mut res = String::with_capacity(b.len() + 32);
        let mut i = 0;
        let mut copied = 0;
        let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        while let Some(at) = next_use(&b, i, name) {
            i = at;
            let bad = |what: &str| {
                Error::BadArgument {
                name: name.to_string(),
                problem: format!(
                    "{what}: a span reducer is only combined, as {name}[i] += v (for ops with that shorthand), combine({name}[i], v) or {name}_combine(i, v)"
                ),
            }
            };
            // A shorthand the op does not allow (`--` never is).
            let allowed = |opstr: &str| {
                if op.shorthands().contains(&opstr) {
                    Ok(())
                } else {
                    Err(Error::ReducerOperator {
                        name: name.to_string(),
                        operator: opstr.to_string(),
                        op: op.to_string(),
                    })
                }
            };
            let after = i + name.len();
            let mut k = after;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k >= b.len() || b[k] != b'[' {
                return Err(bad("used without a subscript"));
            }
            let idx_end = expr_end(&b, k + 1);
            if idx_end >= b.len() || b[idx_end] != b']' {
                return Err(bad("unbalanced subscript"));
            }
            let idx = &out[k + 1..idx_end];
            // What precedes: `combine(` or a prefix `++`.
            let pre = out[copied..i].trim_end();
            let pre_start = copied + pre.len();
            let mut m = idx_end + 1;
            while m < b.len() && b[m].is_ascii_whitespace() {
                m += 1;
            }
            if let Some(p) = pre.strip_suffix('(') {
                let p = p.trim_end();
                if p.ends_with("combine") && (p.len() == 7 || !is_word(p.as_bytes()[p.len() - 8])) {
                    if m >= b.len() || b[m] != b',' {
                        return Err(bad("combine() needs a value"));
                    }
                    let start = copied + p.len() - 7;
                    res.push_str(&out[copied..start]);
                    res.push_str(&format!("{name}_combine(({idx}),"));
                    i = m + 1;
                    copied = i;
                    continue;
                }
            }
            if pre.ends_with("++") || pre.ends_with("--") {
                allowed(&pre[pre.len() - 2..])?;
                res.push_str(&out[copied..pre_start - 2]);
                res.push_str(&format!("{name}_combine(({idx}), 1)"));
                i = idx_end + 1;
                copied = i;
                continue;
            }
            let rest = &out[m..];
            if rest.starts_with("++") || rest.starts_with("--") {
                allowed(&rest[..2])?;
                res.push_str(&out[copied..i]);
                res.push_str(&format!("{name}_combine(({idx}), 1)"));
                i = m + 2;
                copied = i;
                continue;
            }
            let Some(opstr) = ["+=", "*=", "&=", "|=", "^=", "-=", "/=", "%=", "<<=", ">>="]
                .into_iter()
                .find(|o| rest.starts_with(o))
            else {
                return Err(bad("read or assigned"));
            };
            allowed(opstr)?;
            let v_start = m + opstr.len();
            let v_end = expr_end(&b, v_start);
            res.push_str(&out[copied..i]);
            res.push_str(&format!(
                "{name}_combine(({idx}), ({}))",
                &out[v_start..v_end]
            ));
            i = v_end;
            copied = i;
        }
        res.push_str(&out[copied..]);
        out = res;
    }
    Ok(out)
}

/// Rewrites the uses of exact-sum reducers, whose accumulators are not scalars: `sum += v`
/// becomes `sum_combine((v))` and `sum++` / `++sum` become `sum_combine(1)`;
/// `combine(sum, v)` and `sum_combine(v)` are left as they are. Any other use is an error: an
/// exact reducer is only combined into. Line breaks are kept.
pub(crate) fn rewrite_exact(body: &str, names: &[&str]) -> Result<String> {
    let mut out = body.to_string();
    for &name in names {
        let b = out.clone().into_bytes();
        let mut res = String::with_capacity(b.len() + 32);
        let (mut i, mut copied) = (0, 0);
        while let Some(at) = next_use(&b, i, name) {
            i = at;
            let after = i + name.len();
            let mut m = after;
            while m < b.len() && b[m].is_ascii_whitespace() {
                m += 1;
            }
            let pre = out[copied..i].trim_end();
            let rest = &out[m..];
            if pre.ends_with("++") {
                res.push_str(&out[copied..copied + pre.len() - 2]);
                res.push_str(&format!("{name}_combine(1)"));
                i = after;
                copied = i;
            } else if rest.starts_with("++") {
                res.push_str(&out[copied..i]);
                res.push_str(&format!("{name}_combine(1)"));
                i = m + 2;
                copied = i;
            } else if rest.starts_with("+=") {
                let v_end = expr_end(&b, m + 2);
                res.push_str(&out[copied..i]);
                res.push_str(&format!("{name}_combine(({}))", &out[m + 2..v_end]));
                i = v_end;
                copied = i;
            } else if pre.ends_with('(') && pre[..pre.len() - 1].trim_end().ends_with("combine") {
                // combine(sum, v): the generic macro reaches sum_combine(v).
                i = after;
            } else {
                return Err(Error::BadArgument {
                    name: name.to_string(),
                    problem: format!(
                        "read or assigned: an exact sum's reducer is only combined into, as {name} += v, combine({name}, v) or {name}_combine(v)"
                    ),
                });
            }
        }
        res.push_str(&out[copied..]);
        out = res;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Op;
    #[test]
    fn shorthand_checks() {
        assert!(check_shorthands("sum += x[i];", "sum", &Op::Plus.into()).is_ok());
        assert!(check_shorthands("sum++;", "sum", &Op::Plus.into()).is_ok());
        assert!(check_shorthands("++sum;", "sum", &Op::Plus.into()).is_ok());
        assert!(matches!(
            check_shorthands("lo += x[i];", "lo", &Op::Minimum.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            check_shorthands("sum -= 1;", "sum", &Op::Plus.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(
            check_shorthands("summary += 1; combine(sum, 2);", "sum", &Op::Minimum.into()).is_ok()
        );
        assert!(check_shorthands("p *= x[i];", "p", &Op::Multiplies.into()).is_ok());
        assert!(matches!(
            check_shorthands("lo = x[i];", "lo", &Op::Minimum.into()),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(
            check_shorthands("if (lo == 3) combine(lo, 1);", "lo", &Op::Minimum.into()).is_ok()
        );
    }
    #[test]
    fn span_subscripts_are_rewritten() {
        let plus: Operator = Op::Plus.into();
        let min: Operator = Op::Minimum.into();
        let r = |b: &str, op: &Operator| rewrite_spans(b, &[("hist", op)]);
        assert_eq!(
            r("hist[x[i] & 255] += 1;", &plus).unwrap(),
            "hist_combine((x[i] & 255), ( 1));"
        );
        assert_eq!(r("hist[b]++;", &plus).unwrap(), "hist_combine((b), 1);");
        assert_eq!(r("++hist[b];", &plus).unwrap(), "hist_combine((b), 1);");
        assert_eq!(
            r("combine(hist[f(a, b)], g(c, d));", &min).unwrap(),
            "hist_combine((f(a, b)), g(c, d));"
        );
        assert_eq!(
            r("hist_combine(b, v); // hist[0] = 1\nhistory += 1;", &min).unwrap(),
            "hist_combine(b, v); // hist[0] = 1\nhistory += 1;"
        );
        // Line breaks inside a combined value are kept (build logs map back to the body).
        assert_eq!(
            r("hist[b] +=\n  x[i];", &plus).unwrap(),
            "hist_combine((b), (\n  x[i]));"
        );
        assert!(matches!(
            r("hist[b] += 1;", &min),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            r("hist[b]--;", &plus),
            Err(Error::ReducerOperator { .. })
        ));
        assert!(matches!(
            r("y = hist[b];", &plus),
            Err(Error::BadArgument { .. })
        ));
        assert!(matches!(
            r("hist += 1;", &plus),
            Err(Error::BadArgument { .. })
        ));
        assert!(matches!(
            r("hist[b] = 1;", &plus),
            Err(Error::BadArgument { .. })
        ));
    }
    #[test]
    fn identifiers() {
        assert!(is_ident("x_1"));
        assert!(!is_ident("1x"));
        assert!(!is_ident("a-b"));
    }

    #[test]
    fn exact_reducers_are_rewritten() {
        let r = |b: &str| rewrite_exact(b, &["sum"]);
        assert_eq!(
            r("sum += x[i] * 2.0f;").unwrap(),
            "sum_combine(( x[i] * 2.0f));"
        );
        assert_eq!(
            r("sum++; ++sum;").unwrap(),
            "sum_combine(1); sum_combine(1);"
        );
        assert_eq!(r("combine(sum, x[i]);").unwrap(), "combine(sum, x[i]);");
        assert_eq!(r("sum_combine(x[i]);").unwrap(), "sum_combine(x[i]);");
        assert_eq!(r("summary += 1;").unwrap(), "summary += 1;");
        assert_eq!(
            r("if (x[i] > 0) sum += x[i]; // sum += 1\n").unwrap(),
            "if (x[i] > 0) sum_combine(( x[i])); // sum += 1\n"
        );
        assert!(matches!(r("y = sum;"), Err(Error::BadArgument { .. })));
        assert!(matches!(r("sum = 1.0f;"), Err(Error::BadArgument { .. })));
    }
}
