//! The lexer: C tokens of the supported subset, literals with their C typing, and a named
//! error for every C punctuator the subset leaves out.

use super::ast::{column, FloatLit};

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Int(u64),
    Float(FloatLit),
    Ident(String),
    Punct(&'static str),
    End,
}

impl Tok {
    pub(super) fn describe(&self, src: &str, pos: usize, end: usize) -> String {
        match self {
            Tok::End => "end of input".to_string(),
            _ => format!("`{}`", &src[pos..end]),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) pos: usize,
    pub(super) end: usize,
}

/// Supported punctuators, longest first so that the scan is maximal munch as in C.
pub(super) const PUNCTS: [&str; 23] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", ",", "?", ":", "+", "-", "*", "/",
    "%", "<", ">", "&", "^", "|",
];
pub(super) const UNARY_PUNCTS: [&str; 2] = ["!", "~"];

/// C punctuators the host reference does not support, with why.
pub(super) const UNSUPPORTED: [(&str, &str); 22] = [
    (
        "<<=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        ">>=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "++",
        "increment is not supported (for plus twice write `+ +`)",
    ),
    (
        "--",
        "decrement is not supported (for minus twice write `- -`)",
    ),
    (
        "+=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "-=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "*=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "/=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "%=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "&=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "^=",
        "assignment is not supported: the combiner is an expression",
    ),
    (
        "|=",
        "assignment is not supported: the combiner is an expression",
    ),
    ("->", "member access is not supported"),
    (
        "=",
        "assignment is not supported: the combiner is an expression (comparison is `==`)",
    ),
    ("[", "indexing is not supported"),
    ("]", "indexing is not supported"),
    (".", "member access is not supported"),
    (";", "the combiner is one expression, without `;`"),
    ("{", "the combiner is one expression, not a statement block"),
    ("}", "the combiner is one expression, not a statement block"),
    ("#", "preprocessor directives are not supported"),
    ("\"", "strings are not supported"),
];

pub(super) fn lex(src: &str) -> Result<Vec<Token>, String> {
    let err = |pos: usize, msg: String| format!("column {}: {msg}", column(src, pos));
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let c = src[i..].chars().next().expect("i is on a char boundary");
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        let next_is_digit = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if c.is_ascii_digit() || (c == '.' && next_is_digit) {
            // A C preprocessing number: digits, letters, `_`, `.`, and a sign after e/E/p/P.
            i += 1;
            while i < bytes.len() {
                let ch = bytes[i];
                let sign_after_exp =
                    (ch == b'+' || ch == b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                if ch.is_ascii_alphanumeric() || ch == b'_' || ch == b'.' || sign_after_exp {
                    i += 1;
                } else {
                    break;
                }
            }
            let tok = number(&src[start..i]).map_err(|m| err(start, m))?;
            out.push(Token {
                tok,
                pos: start,
                end: i,
            });
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                pos: start,
                end: i,
            });
        } else {
            let rest = &src[i..];
            if let Some((p, why)) = UNSUPPORTED.iter().find(|(p, _)| {
                rest.starts_with(p)
                    // Checked before PUNCTS, so `<<=` is not read as `<<` `=`; `=` must not
                    // shadow `==`.
                    && !(*p == "=" && rest.starts_with("=="))
            }) {
                return Err(err(start, format!("`{p}`: {why}")));
            }
            let Some(p) = PUNCTS
                .iter()
                .chain(UNARY_PUNCTS.iter())
                .find(|p| rest.starts_with(**p))
            else {
                return Err(err(start, format!("unexpected character `{c}`")));
            };
            i += p.len();
            out.push(Token {
                tok: Tok::Punct(p),
                pos: start,
                end: i,
            });
        }
    }
    out.push(Token {
        tok: Tok::End,
        pos: src.len(),
        end: src.len(),
    });
    Ok(out)
}

/// Interprets a C preprocessing number as an integer or floating literal.
pub(super) fn number(text: &str) -> Result<Tok, String> {
    if text.len() > 1 && (text.starts_with("0x") || text.starts_with("0X")) {
        let body = &text[2..];
        if body.contains(['.', 'p', 'P']) {
            return Err(format!(
                "hex floating literal `{text}` is not supported by the host reference; write it \
                 in decimal"
            ));
        }
        if body.contains(['+', '-']) {
            return Err(format!(
                "`{text}` is a single (invalid) token in C: a sign right after hex digit e \
                 joins it; put spaces around the operator"
            ));
        }
        let digits_end = body
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(body.len());
        let (digits, suffix) = body.split_at(digits_end);
        if digits.is_empty() {
            return Err(format!("hex literal `{text}` has no digits"));
        }
        int_suffix(text, suffix)?;
        return u64::from_str_radix(digits, 16)
            .map(Tok::Int)
            .map_err(|_| format!("integer literal `{text}` is out of range of ulong"));
    }
    if text.contains(['.', 'e', 'E']) {
        return float_literal(text);
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if suffix.eq_ignore_ascii_case("f") {
        return Err(format!(
            "the `{suffix}` suffix needs a floating literal: write `{digits}.0{suffix}`"
        ));
    }
    int_suffix(text, suffix)?;
    let radix = if digits.len() > 1 && digits.starts_with('0') {
        if let Some(bad) = digits.chars().find(|c| *c > '7') {
            return Err(format!(
                "invalid digit `{bad}` in octal literal `{text}` (a leading 0 means octal in C)"
            ));
        }
        8
    } else {
        10
    };
    u64::from_str_radix(digits, radix)
        .map(Tok::Int)
        .map_err(|_| format!("integer literal `{text}` is out of range of ulong"))
}

pub(super) fn int_suffix(text: &str, suffix: &str) -> Result<(), String> {
    let ok = ["", "u", "l", "ul", "lu"]
        .iter()
        .any(|s| s.eq_ignore_ascii_case(suffix));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid suffix `{suffix}` on integer literal `{text}` (OpenCL C knows u, l, ul)"
        ))
    }
}

/// A decimal floating literal: `digits [. digits] [e [+-] digits] [f]`, with at least one
/// mantissa digit and a `.` or an exponent.
pub(super) fn float_literal(text: &str) -> Result<Tok, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let mut mantissa = digits(&mut i);
    if i < b.len() && b[i] == b'.' {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return Err(format!("floating literal `{text}` has no digits"));
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return Err(format!("the exponent of `{text}` has no digits"));
        }
    }
    let (num, suffix) = text.split_at(i);
    let bad = || format!("invalid floating literal `{text}`");
    match suffix {
        "" => num
            .parse::<f64>()
            .map(|v| Tok::Float(FloatLit::Double(v)))
            .map_err(|_| bad()),
        "f" | "F" => num
            .parse::<f32>()
            .map(|v| Tok::Float(FloatLit::Single(v)))
            .map_err(|_| bad()),
        "l" | "L" => Err(format!(
            "`{text}`: OpenCL C has no long double; drop the `{suffix}` suffix"
        )),
        _ => Err(format!(
            "invalid suffix `{suffix}` on floating literal `{text}` (OpenCL C knows f)"
        )),
    }
}
