//! Host evaluation of custom combiner expressions.
//!
//! A custom reduction combiner is an OpenCL C expression over two operands named `a` and `b`
//! (`a*b`, `max(a,b)`, `(a < b) ? a : b`, `abs(a) > abs(b) ? a : b`, ...). The device compiles it;
//! the host needs the same result for references and checks, so this module parses the C
//! expression subset and evaluates it with OpenCL C semantics for the reduction type.
//!
//! Semantics, simplified from C's usual arithmetic conversions: every operation runs in the
//! reduction type. Literals are converted to it (an integer literal wraps to the width of an
//! integer type and rounds to nearest in a floating type; a floating literal in an integer
//! combiner is an error rather than a silent truncation). Comparisons and `!`, `&&`, `||` yield 0
//! or 1 in the reduction type. Integers wrap in their width, shift counts are masked to the width
//! (OpenCL C), `/` and `%` truncate toward zero; division by zero and `MIN / -1` are errors.
//! `f32` rounds every operation to `f32`, `f64` runs in `f64`; `%`, bitwise operators and `abs` do
//! not apply to floating types, and `fmin`, `fmax`, `fabs`, `sqrt`, `hypot` do not apply to
//! integers (the device compiler rejects both). `?:`, `&&` and `||` evaluate only the operand they
//! need, as in C, so `b != 0 ? a / b : a` never divides by zero; type errors are reported wherever
//! they are.
//!
//! Where the device can still differ: literals with suffixes or values that C would type
//! differently from the reduction type (`a < 1u` in an `i32` combiner compares unsigned in C,
//! signed here; a double literal like `0.1` in an `f32` combiner on a device with `cl_khr_fp64`
//! makes C compute in `double`, here it is rounded to `f32` first), and the OpenCL ulp allowances
//! of single-precision `/`, `sqrt` and `hypot` (the host rounds correctly).

use crate::types::{ElemType, Value};

/// Deepest nesting of the expression tree (and of the parser's recursion).
const MAX_DEPTH: u32 = 256;

/// The names the host reference knows, for error messages.
const KNOWN: &str = "a, b, min, max, abs, fmin, fmax, fabs, sqrt, hypot, clamp";

/// A parsed combiner expression over `a` and `b`.
#[derive(Debug, Clone)]
pub struct Expr {
    src: String,
    root: Node,
}

#[derive(Debug, Clone)]
struct Node {
    /// Byte offset in the source of the token that names the node (operator, literal, call).
    pos: usize,
    /// Height of the subtree (a leaf is 1).
    depth: u32,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    A,
    B,
    Int(u64),
    Float(FloatLit),
    Unary(UnOp, Box<Node>),
    Binary(BinOp, Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

/// A floating literal, kept at the precision C gives it (`f` suffix: float, none: double).
#[derive(Debug, Clone, Copy, PartialEq)]
enum FloatLit {
    Single(f32),
    Double(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
    /// Operators that need integer operands in OpenCL C.
    fn integer_only(self) -> bool {
        matches!(
            self,
            BinOp::Rem | BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitXor | BinOp::BitOr
        )
    }
}

/// Binary operators by precedence level, loosest first; all are left-associative.
const LEVELS: [&[(&str, BinOp)]; 10] = [
    &[("||", BinOp::Or)],
    &[("&&", BinOp::And)],
    &[("|", BinOp::BitOr)],
    &[("^", BinOp::BitXor)],
    &[("&", BinOp::BitAnd)],
    &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
    &[
        ("<", BinOp::Lt),
        ("<=", BinOp::Le),
        (">", BinOp::Gt),
        (">=", BinOp::Ge),
    ],
    &[("<<", BinOp::Shl), (">>", BinOp::Shr)],
    &[("+", BinOp::Add), ("-", BinOp::Sub)],
    &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Min,
    Max,
    Abs,
    Fmin,
    Fmax,
    Fabs,
    Sqrt,
    Hypot,
    Clamp,
}

/// Which element types a function applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Domain {
    Any,
    Integer,
    Floating,
}

/// name, function, arity, domain, call signature
const FUNCS: [(&str, Func, usize, Domain, &str); 9] = [
    ("min", Func::Min, 2, Domain::Any, "min(x, y)"),
    ("max", Func::Max, 2, Domain::Any, "max(x, y)"),
    ("abs", Func::Abs, 1, Domain::Integer, "abs(x)"),
    ("fmin", Func::Fmin, 2, Domain::Floating, "fmin(x, y)"),
    ("fmax", Func::Fmax, 2, Domain::Floating, "fmax(x, y)"),
    ("fabs", Func::Fabs, 1, Domain::Floating, "fabs(x)"),
    ("sqrt", Func::Sqrt, 1, Domain::Floating, "sqrt(x)"),
    ("hypot", Func::Hypot, 2, Domain::Floating, "hypot(x, y)"),
    ("clamp", Func::Clamp, 3, Domain::Any, "clamp(x, lo, hi)"),
];

fn func_info(f: Func) -> (&'static str, Func, usize, Domain, &'static str) {
    FUNCS
        .into_iter()
        .find(|e| e.1 == f)
        .expect("every function is in FUNCS")
}

/// 1-based column (in characters) of a byte offset.
fn column(src: &str, pos: usize) -> usize {
    src[..pos].chars().count() + 1
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(u64),
    Float(FloatLit),
    Ident(String),
    Punct(&'static str),
    End,
}

impl Tok {
    fn describe(&self, src: &str, pos: usize, end: usize) -> String {
        match self {
            Tok::End => "end of input".to_string(),
            _ => format!("`{}`", &src[pos..end]),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    pos: usize,
    end: usize,
}

/// Supported punctuators, longest first so that the scan is maximal munch as in C.
const PUNCTS: [&str; 23] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", ",", "?", ":", "+", "-", "*", "/",
    "%", "<", ">", "&", "^", "|",
];
const UNARY_PUNCTS: [&str; 2] = ["!", "~"];

/// C punctuators the host reference does not support, with why.
const UNSUPPORTED: [(&str, &str); 22] = [
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

fn lex(src: &str) -> Result<Vec<Token>, String> {
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
fn number(text: &str) -> Result<Tok, String> {
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

fn int_suffix(text: &str, suffix: &str) -> Result<(), String> {
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
fn float_literal(text: &str) -> Result<Tok, String> {
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

// ---------------------------------------------------------------------------------------------
// Parser

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    at: usize,
    nesting: u32,
}

type PResult<T> = Result<T, String>;

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.at]
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.at].clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }
    fn err(&self, pos: usize, msg: impl std::fmt::Display) -> String {
        format!("column {}: {msg}", column(self.src, pos))
    }
    fn found(&self) -> String {
        let t = self.peek();
        t.tok.describe(self.src, t.pos, t.end)
    }
    fn node(&self, pos: usize, kind: Kind) -> PResult<Node> {
        let below = match &kind {
            Kind::A | Kind::B | Kind::Int(_) | Kind::Float(_) => 0,
            Kind::Unary(_, x) => x.depth,
            Kind::Binary(_, x, y) => x.depth.max(y.depth),
            Kind::Cond(c, x, y) => c.depth.max(x.depth).max(y.depth),
            Kind::Call(_, args) => args.iter().map(|n| n.depth).max().unwrap_or(0),
        };
        let depth = below + 1;
        if depth > MAX_DEPTH {
            return Err(self.err(pos, too_deep()));
        }
        Ok(Node { pos, depth, kind })
    }
    fn enter(&mut self) -> PResult<()> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(self.err(self.peek().pos, too_deep()));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// conditional-expression: logical-or [ `?` conditional `:` conditional ]
    fn ternary(&mut self) -> PResult<Node> {
        self.enter()?;
        let cond = self.binary(0)?;
        let out = if self.is_punct("?") {
            let q = self.bump().pos;
            let then = self.ternary()?;
            if !self.is_punct(":") {
                return Err(self.err(
                    self.peek().pos,
                    format!(
                        "expected `:` of the `?` at column {}, found {}",
                        column(self.src, q),
                        self.found()
                    ),
                ));
            }
            self.bump();
            let otherwise = self.ternary()?;
            self.node(
                q,
                Kind::Cond(Box::new(cond), Box::new(then), Box::new(otherwise)),
            )?
        } else {
            cond
        };
        self.leave();
        Ok(out)
    }

    fn binary(&mut self, level: usize) -> PResult<Node> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct(p) => LEVELS[level].iter().find(|(s, _)| *s == p).map(|e| e.1),
                _ => None,
            };
            let Some(op) = op else { break };
            let pos = self.bump().pos;
            let rhs = self.binary(level + 1)?;
            lhs = self.node(pos, Kind::Binary(op, Box::new(lhs), Box::new(rhs)))?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Node> {
        let op = match self.peek().tok {
            Tok::Punct("-") => UnOp::Neg,
            Tok::Punct("+") => UnOp::Plus,
            Tok::Punct("!") => UnOp::Not,
            Tok::Punct("~") => UnOp::BitNot,
            _ => return self.primary(),
        };
        let pos = self.bump().pos;
        self.enter()?;
        let x = self.unary()?;
        self.leave();
        self.node(pos, Kind::Unary(op, Box::new(x)))
    }

    fn primary(&mut self) -> PResult<Node> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Int(v) => {
                self.bump();
                self.node(t.pos, Kind::Int(v))
            }
            Tok::Float(v) => {
                self.bump();
                self.node(t.pos, Kind::Float(v))
            }
            Tok::Punct("(") => {
                self.bump();
                let inner = self.ternary()?;
                if !self.is_punct(")") {
                    return Err(self.err(
                        self.peek().pos,
                        format!(
                            "expected `)` to close the `(` at column {}, found {}",
                            column(self.src, t.pos),
                            self.found()
                        ),
                    ));
                }
                self.bump();
                Ok(inner)
            }
            Tok::Ident(ref name) => {
                self.bump();
                let kind = match name.as_str() {
                    "a" => Kind::A,
                    "b" => Kind::B,
                    _ => return self.call(name, t.pos),
                };
                if self.is_punct("(") {
                    return Err(self.err(
                        self.peek().pos,
                        format!("`{name}` is an operand, not a function"),
                    ));
                }
                self.node(t.pos, kind)
            }
            _ => Err(self.err(
                t.pos,
                format!(
                    "expected an operand (a, b, a number, a call or `(`), found {}",
                    self.found()
                ),
            )),
        }
    }

    fn call(&mut self, name: &str, pos: usize) -> PResult<Node> {
        let Some((_, func, arity, _, sig)) = FUNCS.into_iter().find(|e| e.0 == name) else {
            return Err(self.err(
                pos,
                format!("unknown name `{name}`; the host reference knows {KNOWN}"),
            ));
        };
        if !self.is_punct("(") {
            return Err(self.err(pos, format!("`{name}` is a function: call it as {sig}")));
        }
        self.bump();
        let mut args = Vec::new();
        if !self.is_punct(")") {
            loop {
                args.push(self.ternary()?);
                if self.is_punct(",") {
                    self.bump();
                } else if self.is_punct(")") {
                    break;
                } else {
                    return Err(self.err(
                        self.peek().pos,
                        format!(
                            "expected `,` or `)` in the call of `{name}` at column {}, found {}",
                            column(self.src, pos),
                            self.found()
                        ),
                    ));
                }
            }
        }
        self.bump();
        if args.len() != arity {
            let s = if arity == 1 { "" } else { "s" };
            return Err(self.err(
                pos,
                format!(
                    "`{name}` takes {arity} argument{s} ({sig}), found {}",
                    args.len()
                ),
            ));
        }
        self.node(pos, Kind::Call(func, args))
    }
}

fn too_deep() -> String {
    format!("expression nested too deeply (more than {MAX_DEPTH} levels)")
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// An evaluation error: byte offset and message.
type EResult<T> = Result<T, (usize, String)>;

/// An element type the combiner can run in.
trait Scalar: Copy + PartialOrd {
    fn int_lit(v: u64) -> Self;
    fn float_lit(v: FloatLit) -> Option<Self>;
    fn is_true(self) -> bool;
    fn from_bool(v: bool) -> Self;
    fn neg(self) -> Self;
    fn bit_not(self) -> Option<Self>;
    fn arith(op: BinOp, x: Self, y: Self) -> Result<Self, String>;
    fn call(f: Func, args: &[Self]) -> Result<Self, String>;
}

macro_rules! int_scalar {
    ($t:ty, $abs:expr) => {
        impl Scalar for $t {
            fn int_lit(v: u64) -> Self {
                v as $t
            }
            fn float_lit(_: FloatLit) -> Option<Self> {
                None
            }
            fn is_true(self) -> bool {
                self != 0
            }
            fn from_bool(v: bool) -> Self {
                <$t>::from(v)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn bit_not(self) -> Option<Self> {
                Some(!self)
            }
            fn arith(op: BinOp, x: Self, y: Self) -> Result<Self, String> {
                let checked = |r: Option<$t>| {
                    r.ok_or_else(|| {
                        if y == 0 {
                            format!("integer division by zero (`{}`)", op.symbol())
                        } else {
                            format!("`{x} {} {y}` overflows {}", op.symbol(), stringify!($t))
                        }
                    })
                };
                Ok(match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div => checked(x.checked_div(y))?,
                    BinOp::Rem => checked(x.checked_rem(y))?,
                    // OpenCL C masks the count to the width; wrapping_sh* do exactly that.
                    BinOp::Shl => x.wrapping_shl(y as u32),
                    BinOp::Shr => x.wrapping_shr(y as u32),
                    BinOp::BitAnd => x & y,
                    BinOp::BitXor => x ^ y,
                    BinOp::BitOr => x | y,
                    _ => return Err(format!("`{}` is not arithmetic", op.symbol())),
                })
            }
            fn call(f: Func, args: &[Self]) -> Result<Self, String> {
                let abs: fn($t) -> $t = $abs;
                Ok(match (f, args) {
                    (Func::Min, &[x, y]) => x.min(y),
                    (Func::Max, &[x, y]) => x.max(y),
                    (Func::Abs, &[x]) => abs(x),
                    (Func::Clamp, &[x, lo, hi]) => {
                        let m = if x < lo { lo } else { x };
                        if hi < m {
                            hi
                        } else {
                            m
                        }
                    }
                    _ => {
                        return Err(format!(
                            "`{}` does not apply to {}",
                            func_info(f).0,
                            stringify!($t)
                        ))
                    }
                })
            }
        }
    };
}
int_scalar!(i32, |x| x.wrapping_abs());
int_scalar!(u32, |x| x);
int_scalar!(i64, |x| x.wrapping_abs());
int_scalar!(u64, |x| x);

macro_rules! float_scalar {
    ($t:ty) => {
        impl Scalar for $t {
            fn int_lit(v: u64) -> Self {
                v as $t
            }
            fn float_lit(v: FloatLit) -> Option<Self> {
                Some(match v {
                    FloatLit::Single(v) => v as $t,
                    FloatLit::Double(v) => v as $t,
                })
            }
            fn is_true(self) -> bool {
                self != 0.0
            }
            fn from_bool(v: bool) -> Self {
                if v {
                    1.0
                } else {
                    0.0
                }
            }
            fn neg(self) -> Self {
                -self
            }
            fn bit_not(self) -> Option<Self> {
                None
            }
            fn arith(op: BinOp, x: Self, y: Self) -> Result<Self, String> {
                Ok(match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    _ => {
                        return Err(format!(
                            "`{}` does not apply to {}",
                            op.symbol(),
                            stringify!($t)
                        ))
                    }
                })
            }
            fn call(f: Func, args: &[Self]) -> Result<Self, String> {
                Ok(match (f, args) {
                    // OpenCL C: min returns y if y < x, else x; max returns y if x < y, else x.
                    (Func::Min, &[x, y]) => {
                        if y < x {
                            y
                        } else {
                            x
                        }
                    }
                    (Func::Max, &[x, y]) => {
                        if x < y {
                            y
                        } else {
                            x
                        }
                    }
                    // fmin/fmax return the operand that is not NaN, as Rust's min/max do.
                    (Func::Fmin, &[x, y]) => x.min(y),
                    (Func::Fmax, &[x, y]) => x.max(y),
                    (Func::Fabs, &[x]) => x.abs(),
                    (Func::Sqrt, &[x]) => x.sqrt(),
                    (Func::Hypot, &[x, y]) => x.hypot(y),
                    // OpenCL C: clamp on floating types is fmin(fmax(x, lo), hi).
                    (Func::Clamp, &[x, lo, hi]) => x.max(lo).min(hi),
                    _ => {
                        return Err(format!(
                            "`{}` does not apply to {}",
                            func_info(f).0,
                            stringify!($t)
                        ))
                    }
                })
            }
        }
    };
}
float_scalar!(f32);
float_scalar!(f64);

fn run<T: Scalar>(n: &Node, a: T, b: T) -> EResult<T> {
    let at = |r: Result<T, String>| r.map_err(|m| (n.pos, m));
    Ok(match &n.kind {
        Kind::A => a,
        Kind::B => b,
        Kind::Int(v) => T::int_lit(*v),
        Kind::Float(v) => at(T::float_lit(*v).ok_or_else(|| "floating literal".to_string()))?,
        Kind::Unary(op, x) => {
            let x = run(x, a, b)?;
            match op {
                UnOp::Neg => x.neg(),
                UnOp::Plus => x,
                UnOp::Not => T::from_bool(!x.is_true()),
                UnOp::BitNot => at(x.bit_not().ok_or_else(|| "`~`".to_string()))?,
            }
        }
        Kind::Binary(op, x, y) => {
            let x = run(x, a, b)?;
            match op {
                BinOp::And => T::from_bool(x.is_true() && run(y, a, b)?.is_true()),
                BinOp::Or => T::from_bool(x.is_true() || run(y, a, b)?.is_true()),
                _ => {
                    let y = run(y, a, b)?;
                    match op {
                        BinOp::Lt => T::from_bool(x < y),
                        BinOp::Le => T::from_bool(x <= y),
                        BinOp::Gt => T::from_bool(x > y),
                        BinOp::Ge => T::from_bool(x >= y),
                        BinOp::Eq => T::from_bool(x == y),
                        BinOp::Ne => T::from_bool(x != y),
                        _ => at(T::arith(*op, x, y))?,
                    }
                }
            }
        }
        Kind::Cond(c, x, y) => {
            if run(c, a, b)?.is_true() {
                run(x, a, b)?
            } else {
                run(y, a, b)?
            }
        }
        Kind::Call(f, args) => {
            let mut vals = [a; 3];
            for (slot, arg) in vals.iter_mut().zip(args) {
                *slot = run(arg, a, b)?;
            }
            at(T::call(*f, &vals[..args.len()]))?
        }
    })
}

/// Rejects what the device compiler would reject for `ty`, wherever it is in the tree (an
/// untaken branch still has to compile).
fn check(n: &Node, ty: ElemType) -> EResult<()> {
    let float = ty.is_float();
    let fail = |m: String| Err((n.pos, m));
    match &n.kind {
        Kind::A | Kind::B | Kind::Int(_) => Ok(()),
        Kind::Float(_) if !float => fail(format!(
            "floating literal in an integer ({ty}) combiner; the host reference runs every \
             operation in {ty}, so write an integer"
        )),
        Kind::Float(_) => Ok(()),
        Kind::Unary(op, x) => {
            if *op == UnOp::BitNot && float {
                return fail(format!(
                    "`~` needs an integer operand; the combiner runs in {ty}"
                ));
            }
            check(x, ty)
        }
        Kind::Binary(op, x, y) => {
            if op.integer_only() && float {
                let hint = if *op == BinOp::Rem {
                    " (OpenCL C has no `%` on floating types)"
                } else {
                    ""
                };
                return fail(format!(
                    "`{}` needs integer operands; the combiner runs in {ty}{hint}",
                    op.symbol()
                ));
            }
            check(x, ty)?;
            check(y, ty)
        }
        Kind::Cond(c, x, y) => {
            check(c, ty)?;
            check(x, ty)?;
            check(y, ty)
        }
        Kind::Call(f, args) => {
            let (name, _, _, domain, _) = func_info(*f);
            match (domain, float) {
                (Domain::Integer, true) => {
                    return fail(format!(
                        "`{name}` takes integers in OpenCL C; for {ty} use fabs"
                    ))
                }
                (Domain::Floating, false) => {
                    return fail(format!(
                        "`{name}` takes floating-point arguments; the combiner runs in {ty}"
                    ))
                }
                _ => {}
            }
            args.iter().try_for_each(|x| check(x, ty))
        }
    }
}

impl Expr {
    /// Parses; the error names the position and what was expected. Identifiers other than a, b
    /// and the known functions are errors ("unknown name `c`; the host reference knows a, b, min,
    /// max, ...").
    pub fn parse(src: &str) -> Result<Expr, String> {
        if src.trim().is_empty() {
            return Err("column 1: empty expression; write e.g. `a + b`".to_string());
        }
        let toks = lex(src)?;
        let mut p = Parser {
            src,
            toks,
            at: 0,
            nesting: 0,
        };
        let root = p.ternary()?;
        if p.peek().tok != Tok::End {
            return Err(p.err(
                p.peek().pos,
                format!("expected an operator or end of input, found {}", p.found()),
            ));
        }
        Ok(Expr {
            src: src.to_string(),
            root,
        })
    }

    /// Evaluates with OpenCL C semantics for `ty` (crate::types::ElemType: I32, U32, I64, U64
    /// integers wrap in their width; F32 rounds every operation to f32; F64 in f64).
    pub fn eval(&self, ty: ElemType, a: Value, b: Value) -> Result<Value, String> {
        if ty == ElemType::F16 {
            return Err(format!(
                "combiner `{}`: f16 is a storage type; combiners run in i32, u32, i64, u64, f32 \
                 or f64",
                self.src
            ));
        }
        for (name, v) in [("a", a), ("b", b)] {
            if v.ty() != ty {
                return Err(format!(
                    "combiner `{}`: operand `{name}` is {} but the combiner runs in {ty}",
                    self.src,
                    v.ty()
                ));
            }
        }
        let located = |(pos, msg): (usize, String)| {
            format!(
                "combiner `{}`, column {}: {msg}",
                self.src,
                column(&self.src, pos)
            )
        };
        check(&self.root, ty).map_err(located)?;
        let r = &self.root;
        let out = match (a, b) {
            (Value::I32(a), Value::I32(b)) => run(r, a, b).map(Value::I32),
            (Value::U32(a), Value::U32(b)) => run(r, a, b).map(Value::U32),
            (Value::I64(a), Value::I64(b)) => run(r, a, b).map(Value::I64),
            (Value::U64(a), Value::U64(b)) => run(r, a, b).map(Value::U64),
            (Value::F32(a), Value::F32(b)) => run(r, a, b).map(Value::F32),
            (Value::F64(a), Value::F64(b)) => run(r, a, b).map(Value::F64),
            _ => unreachable!("both operands were checked to be of type {ty}"),
        };
        out.map_err(located)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemType::*;

    fn ev(src: &str, a: Value, b: Value) -> Value {
        Expr::parse(src)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
            .eval(a.ty(), a, b)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    }
    fn i32s(src: &str, a: i32, b: i32) -> i32 {
        match ev(src, Value::I32(a), Value::I32(b)) {
            Value::I32(v) => v,
            v => panic!("{v:?}"),
        }
    }
    fn u32s(src: &str, a: u32, b: u32) -> u32 {
        match ev(src, Value::U32(a), Value::U32(b)) {
            Value::U32(v) => v,
            v => panic!("{v:?}"),
        }
    }
    fn i64s(src: &str, a: i64, b: i64) -> i64 {
        match ev(src, Value::I64(a), Value::I64(b)) {
            Value::I64(v) => v,
            v => panic!("{v:?}"),
        }
    }
    fn u64s(src: &str, a: u64, b: u64) -> u64 {
        match ev(src, Value::U64(a), Value::U64(b)) {
            Value::U64(v) => v,
            v => panic!("{v:?}"),
        }
    }
    fn f32s(src: &str, a: f32, b: f32) -> f32 {
        match ev(src, Value::F32(a), Value::F32(b)) {
            Value::F32(v) => v,
            v => panic!("{v:?}"),
        }
    }
    fn f64s(src: &str, a: f64, b: f64) -> f64 {
        match ev(src, Value::F64(a), Value::F64(b)) {
            Value::F64(v) => v,
            v => panic!("{v:?}"),
        }
    }
    /// The parse error for `src`.
    fn perr(src: &str) -> String {
        match Expr::parse(src) {
            Ok(e) => panic!("{src} parsed: {e:?}"),
            Err(e) => e,
        }
    }
    /// The evaluation error for `src` in `ty` with a = 1, b = 0.
    fn eerr(src: &str, ty: ElemType) -> String {
        let (a, b) = match ty {
            I32 => (Value::I32(1), Value::I32(0)),
            U32 => (Value::U32(1), Value::U32(0)),
            I64 => (Value::I64(1), Value::I64(0)),
            U64 => (Value::U64(1), Value::U64(0)),
            F32 => (Value::F32(1.0), Value::F32(0.0)),
            F64 => (Value::F64(1.0), Value::F64(0.0)),
            F16 => (Value::F32(1.0), Value::F32(0.0)),
        };
        let e = Expr::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        match e.eval(ty, a, b) {
            Ok(v) => panic!("{src} in {ty} gave {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn brief_examples() {
        assert_eq!(i32s("a*b", 6, 7), 42);
        assert_eq!(i32s("max(a,b)", -3, 2), 2);
        assert_eq!(i32s("a + b + 1", 1, 2), 4);
        assert_eq!(i32s("(a < b) ? a : b", 5, 3), 3);
        assert_eq!(f32s("fmax(a, b)", 1.5, -2.0), 1.5);
        assert_eq!(i64s("a > b ? a : b", -1, -9), -1);
        assert_eq!(i32s("abs(a) > abs(b) ? a : b", -7, 5), -7);
        assert_eq!(i32s("abs(a) > abs(b) ? a : b", 3, -5), -5);
        assert_eq!(u32s("a ^ b", 0b1100, 0b1010), 0b0110);
        assert_eq!(u32s("(a & b) | 1", 0b1100, 0b1010), 0b1001);
    }

    #[test]
    fn integer_operators() {
        assert_eq!(i32s("a * b", -3, 4), -12);
        assert_eq!(i32s("a / b", 7, 2), 3);
        assert_eq!(i32s("a / b", -7, 2), -3, "division truncates toward zero");
        assert_eq!(
            i32s("a % b", -7, 2),
            -1,
            "remainder has the sign of the dividend"
        );
        assert_eq!(i32s("a % b", 7, -2), 1);
        assert_eq!(i32s("a + b", 3, 4), 7);
        assert_eq!(i32s("a - b", 3, 4), -1);
        assert_eq!(i32s("a << b", 3, 2), 12);
        assert_eq!(i32s("a >> b", 12, 2), 3);
        assert_eq!(i32s("a < b", 1, 2), 1);
        assert_eq!(i32s("a < b", 2, 2), 0);
        assert_eq!(i32s("a <= b", 2, 2), 1);
        assert_eq!(i32s("a <= b", 3, 2), 0);
        assert_eq!(i32s("a > b", 3, 2), 1);
        assert_eq!(i32s("a > b", 2, 2), 0);
        assert_eq!(i32s("a >= b", 2, 2), 1);
        assert_eq!(i32s("a >= b", 1, 2), 0);
        assert_eq!(i32s("a == b", 2, 2), 1);
        assert_eq!(i32s("a == b", 1, 2), 0);
        assert_eq!(i32s("a != b", 1, 2), 1);
        assert_eq!(i32s("a != b", 2, 2), 0);
        assert_eq!(i32s("a & b", 0b1100, 0b1010), 0b1000);
        assert_eq!(i32s("a ^ b", 0b1100, 0b1010), 0b0110);
        assert_eq!(i32s("a | b", 0b1100, 0b1010), 0b1110);
        assert_eq!(
            i32s("a && b", 5, 7),
            1,
            "logical ops yield 1, not an operand"
        );
        assert_eq!(i32s("a && b", 5, 0), 0);
        assert_eq!(i32s("a || b", 0, 7), 1);
        assert_eq!(i32s("a || b", 0, 0), 0);
        assert_eq!(i32s("-a", 5, 0), -5);
        assert_eq!(i32s("+a", 5, 0), 5);
        assert_eq!(i32s("!a", 5, 0), 0);
        assert_eq!(i32s("!a", 0, 0), 1);
        assert_eq!(i32s("~a", 0, 0), -1);
        assert_eq!(u32s("~a", 0, 0), u32::MAX);
        assert_eq!(i32s("- -a", 5, 0), 5);
        assert_eq!(i32s("!!a", 5, 0), 1);
        assert_eq!(i32s("-~a", 5, 0), 6);
    }

    #[test]
    fn every_integer_type() {
        assert_eq!(u32s("a - b", 1, 2), u32::MAX);
        assert_eq!(i64s("a * b", 1 << 40, 3), 3 << 40);
        assert_eq!(u64s("a + b", u64::MAX, 2), 1);
        assert_eq!(u64s("a / b", u64::MAX, 2), u64::MAX / 2);
        assert_eq!(i64s("a % b", -(1 << 40) - 1, 1 << 20), -1);
        assert_eq!(u64s("a >> 63", 1 << 63, 0), 1);
    }

    #[test]
    fn wrapping() {
        assert_eq!(i32s("a + 1", i32::MAX, 0), i32::MIN);
        assert_eq!(i32s("a - 1", i32::MIN, 0), i32::MAX);
        assert_eq!(i32s("a * b", 1 << 16, 1 << 16), 0);
        assert_eq!(i32s("-a", i32::MIN, 0), i32::MIN);
        assert_eq!(i32s("abs(a)", i32::MIN, 0), i32::MIN);
        assert_eq!(u32s("a + b", u32::MAX, 1), 0);
        assert_eq!(u32s("-a", 1, 0), u32::MAX);
        assert_eq!(i64s("a + 1", i64::MAX, 0), i64::MIN);
        assert_eq!(i64s("abs(a)", i64::MIN, 0), i64::MIN);
        assert_eq!(u64s("a * b", u64::MAX, u64::MAX), 1);
    }

    #[test]
    fn literals_convert_to_the_reduction_type() {
        assert_eq!(u32s("-1", 0, 0), u32::MAX);
        assert_eq!(i32s("a + 4294967295", 5, 0), 4, "wraps to -1 in i32");
        assert_eq!(i32s("a + 0x100000001", 5, 0), 6, "truncated to 32 bits");
        assert_eq!(i64s("a + 0x100000001", 5, 0), 0x1_0000_0006);
        assert_eq!(i32s("-2147483648", 0, 0), i32::MIN);
        assert_eq!(u64s("18446744073709551615", 0, 0), u64::MAX);
        assert_eq!(u64s("0xFFFFFFFFFFFFFFFFul", 0, 0), u64::MAX);
        assert_eq!(f32s("16777217", 0.0, 0.0), 16777216.0, "rounds to f32");
        assert_eq!(f64s("16777217", 0.0, 0.0), 16777217.0);
    }

    #[test]
    fn literal_forms() {
        assert_eq!(i32s("0x1F", 0, 0), 31);
        assert_eq!(i32s("0XaB", 0, 0), 0xab);
        assert_eq!(i32s("010", 0, 0), 8, "a leading 0 is octal in C");
        assert_eq!(i32s("0", 0, 0), 0);
        for s in [
            "7u", "7U", "7l", "7L", "7ul", "7UL", "7lu", "7LU", "7uL", "0x7u", "07L",
        ] {
            assert_eq!(i32s(s, 0, 0), 7, "{s}");
        }
        assert_eq!(f64s("1.5", 0.0, 0.0), 1.5);
        assert_eq!(f64s("1.", 0.0, 0.0), 1.0);
        assert_eq!(f64s(".25", 0.0, 0.0), 0.25);
        assert_eq!(f64s("1e3", 0.0, 0.0), 1000.0);
        assert_eq!(f64s("1E+3", 0.0, 0.0), 1000.0);
        assert_eq!(f64s("2.5e-1", 0.0, 0.0), 0.25);
        assert_eq!(f64s("1.e2", 0.0, 0.0), 100.0);
        assert_eq!(f32s("1.5f", 0.0, 0.0), 1.5);
        assert_eq!(f32s("1e2F", 0.0, 0.0), 100.0);
        assert_eq!(f64s("1e999", 0.0, 0.0), f64::INFINITY);
        // An `f` literal has float precision even in a double combiner.
        assert_eq!(f64s("0.1f", 0.0, 0.0), 0.1f32 as f64);
        assert_eq!(f64s("0.1", 0.0, 0.0), 0.1);
        // A double literal in a float combiner is rounded to f32 (as C converts it).
        assert_eq!(f32s("0.1", 0.0, 0.0), 0.1f32);
        // f-suffixed literals are rounded once, straight from decimal to f32.
        assert_eq!(f32s("1.00000005960464477539f", 0.0, 0.0), 1.0);
    }

    #[test]
    fn precedence_is_c() {
        assert_eq!(i32s("a + b * 2", 1, 3), 7);
        assert_eq!(i32s("(a + b) * 2", 1, 3), 8);
        assert_eq!(i32s("a - b / 2", 10, 4), 8);
        assert_eq!(i32s("a + b % 3", 10, 4), 11);
        assert_eq!(i32s("1 + 2 << 1", 0, 0), 6, "+ binds tighter than <<");
        assert_eq!(i32s("1 << 2 + 1", 0, 0), 8);
        assert_eq!(i32s("1 << 2 < 5", 0, 0), 1, "<< binds tighter than <");
        assert_eq!(i32s("1 < 2 == 1", 0, 0), 1, "< binds tighter than ==");
        assert_eq!(i32s("2 == 2 < 1", 0, 0), 0);
        assert_eq!(
            i32s("a & b == b", 6, 2),
            0,
            "== binds tighter than &: 6 & 1"
        );
        assert_eq!(i32s("(a & b) == b", 6, 2), 1);
        assert_eq!(i32s("1 | 2 ^ 3 & 1", 0, 0), 3, "& then ^ then |");
        assert_eq!(i32s("6 ^ 3 | 8", 0, 0), 13);
        assert_eq!(i32s("6 & 3 ^ 8", 0, 0), 10);
        assert_eq!(i32s("1 | 0 && 0", 0, 0), 0, "| binds tighter than &&");
        assert_eq!(i32s("1 || 0 && 0", 0, 0), 1, "&& binds tighter than ||");
        assert_eq!(i32s("0 && 0 || 1", 0, 0), 1);
        assert_eq!(i32s("0 || 1 ? 5 : 6", 0, 0), 5, "?: is looser than ||");
        assert_eq!(i32s("-a * b", 2, 3), -6);
        assert_eq!(i32s("-2 * -3", 0, 0), 6);
        assert_eq!(i32s("!a + 1", 0, 0), 2, "unary binds tighter than +");
        assert_eq!(i32s("~0 + 1", 0, 0), 0);
        assert_eq!(i32s("-a << 1", 3, 0), -6);
        assert_eq!(i32s("a < b == b < a", 1, 2), 0);
    }

    #[test]
    fn binary_operators_are_left_associative() {
        assert_eq!(i32s("10 - 3 - 2", 0, 0), 5);
        assert_eq!(i32s("100 / 10 / 5", 0, 0), 2);
        assert_eq!(i32s("100 % 7 % 3", 0, 0), 2);
        assert_eq!(i32s("2 << 1 << 1", 0, 0), 8);
        assert_eq!(i32s("64 >> 2 >> 1", 0, 0), 8);
        assert_eq!(i32s("3 < 2 < 1", 0, 0), 1, "(3 < 2) < 1");
        assert_eq!(i32s("2 == 2 == 2", 0, 0), 0, "(2 == 2) == 2");
    }

    #[test]
    fn ternary_is_right_associative() {
        assert_eq!(
            i32s("1 ? 1 : 0 ? 2 : 3", 0, 0),
            1,
            "left-assoc would give 2"
        );
        assert_eq!(i32s("0 ? 1 : 0 ? 2 : 3", 0, 0), 3);
        assert_eq!(i32s("0 ? 1 : 1 ? 2 : 3", 0, 0), 2);
        assert_eq!(i32s("a ? b ? 1 : 2 : 3", 1, 0), 2, "nested in the middle");
        assert_eq!(i32s("a ? b ? 1 : 2 : 3", 1, 1), 1);
        assert_eq!(i32s("a ? b ? 1 : 2 : 3", 0, 1), 3);
        assert_eq!(i32s("a > b ? a : b > 0 ? b : 0", -5, -3), 0);
        assert_eq!(i32s("(a ? b : 0) + 1", 1, 4), 5);
        assert_eq!(
            i32s("a ? b : 0 + 1", 0, 4),
            1,
            "the else branch takes the sum"
        );
    }

    #[test]
    fn short_circuits_like_c() {
        assert_eq!(i32s("b != 0 ? a / b : a", 7, 0), 7);
        assert_eq!(i32s("b == 0 || a % b == 0", 7, 0), 1);
        assert_eq!(i32s("b != 0 && a / b > 1", 7, 0), 0);
        assert_eq!(i32s("b ? a / b : 0", 7, 0), 0);
    }

    #[test]
    fn division_errors() {
        let e = eerr("a / b", I32);
        assert!(
            e.contains("column 3") && e.contains("division by zero"),
            "{e}"
        );
        assert!(e.contains("`a / b`"), "{e}");
        let e = eerr("a % b", U64);
        assert!(
            e.contains("column 3") && e.contains("division by zero"),
            "{e}"
        );
        let e = Expr::parse("a / b")
            .unwrap()
            .eval(I32, Value::I32(i32::MIN), Value::I32(-1))
            .unwrap_err();
        assert!(e.contains("overflows"), "{e}");
        let e = Expr::parse("a % b")
            .unwrap()
            .eval(I64, Value::I64(i64::MIN), Value::I64(-1))
            .unwrap_err();
        assert!(e.contains("overflows"), "{e}");
        // Floating division by zero is IEEE, not an error.
        assert_eq!(f32s("a / b", 1.0, 0.0), f32::INFINITY);
        assert!(f64s("a / b", 0.0, 0.0).is_nan());
    }

    #[test]
    fn shifts_mask_the_count() {
        assert_eq!(i32s("1 << 33", 0, 0), 2);
        assert_eq!(i32s("1 << 32", 0, 0), 1);
        assert_eq!(i64s("1 << 33", 0, 0), 1 << 33);
        assert_eq!(i64s("1 << 64", 0, 0), 1);
        assert_eq!(u32s("a >> 35", 64, 0), 8);
        assert_eq!(i32s("1 << -1", 0, 0), i32::MIN, "count -1 masks to 31");
        assert_eq!(i32s("a >> 1", -8, 0), -4, "signed >> is arithmetic");
        assert_eq!(
            u32s("a >> 1", 0x8000_0000, 0),
            0x4000_0000,
            "unsigned >> is logical"
        );
        assert_eq!(i64s("a >> 63", i64::MIN, 0), -1);
        assert_eq!(i32s("a << 1", i32::MAX, 0), -2);
    }

    #[test]
    fn signed_and_unsigned_compare() {
        assert_eq!(u32s("a > b", 0xFFFF_FFFF, 1), 1);
        assert_eq!(i32s("a > b", -1, 1), 0);
        assert_eq!(u32s("max(a, b)", 0xFFFF_FFFF, 1), 0xFFFF_FFFF);
        assert_eq!(i32s("max(a, b)", -1, 1), 1);
        assert_eq!(u32s("min(a, b)", 0xFFFF_FFFF, 1), 1);
        assert_eq!(i32s("min(a, b)", -1, 1), -1);
        assert_eq!(u64s("(a < b) ? a : b", u64::MAX, 3), 3);
        assert_eq!(i64s("(a < b) ? a : b", -1, 3), -1);
        assert_eq!(u32s("a < 0", 5, 0), 0);
        assert_eq!(u32s("-1 > a", 5, 0), 1, "-1 is UINT_MAX in a u32 combiner");
    }

    #[test]
    fn integer_functions() {
        assert_eq!(i32s("abs(a)", -5, 0), 5);
        assert_eq!(u32s("abs(a)", 0xFFFF_FFFF, 0), 0xFFFF_FFFF);
        assert_eq!(i32s("clamp(a, 0, 10)", -3, 0), 0);
        assert_eq!(i32s("clamp(a, 0, 10)", 30, 0), 10);
        assert_eq!(i32s("clamp(a, 0, 10)", 4, 0), 4);
        assert_eq!(u32s("clamp(a, 1, b)", 0xFFFF_FFFF, 9), 9);
        assert_eq!(i64s("min(max(a, b), 3)", 1, 7), 3);
        assert_eq!(i32s("max(a, -b)", -5, 2), -2);
    }

    #[test]
    fn f32_rounds_every_operation() {
        assert_eq!(f32s("a + 1", 16777216.0, 0.0), 16777216.0);
        assert_eq!(f64s("a + 1", 16777216.0, 0.0), 16777217.0);
        assert_eq!(
            f32s("a + b + 1", 16777216.0, 1.0),
            16777216.0,
            "rounded after each +"
        );
        assert_eq!(f32s("a + (b + 1)", 16777216.0, 1.0), 16777218.0);
        assert_eq!(f32s("a * b", 0.1, 3.0), 0.1f32 * 3.0f32);
        assert_ne!(f32s("a * b", 0.1, 3.0) as f64, 0.1f32 as f64 * 3.0);
        assert_eq!(f32s("a / b", 1.0, 3.0), 1.0f32 / 3.0);
        assert_eq!(f32s("a + 0.1", 1.0, 0.0), 1.0f32 + 0.1f32);
    }

    #[test]
    fn float_operators() {
        assert_eq!(f64s("a * b", 1.5, -2.0), -3.0);
        assert_eq!(f64s("a / b", 3.0, 2.0), 1.5);
        assert_eq!(f64s("a - b", 3.0, 2.5), 0.5);
        assert_eq!(f64s("-a", 3.0, 0.0), -3.0);
        assert!(f64s("-a", 0.0, 0.0).is_sign_negative());
        assert_eq!(f64s("+a", 3.0, 0.0), 3.0);
        assert_eq!(f64s("!a", 0.0, 0.0), 1.0);
        assert_eq!(f64s("!a", 0.5, 0.0), 0.0);
        assert_eq!(f64s("!a", f64::NAN, 0.0), 0.0, "NaN is true");
        assert_eq!(f32s("a < b", 1.0, 2.0), 1.0);
        assert_eq!(f32s("a >= b", 1.0, 2.0), 0.0);
        assert_eq!(f32s("a && b", 0.5, 2.0), 1.0);
        assert_eq!(f32s("a || b", 0.0, 0.0), 0.0);
        assert_eq!(f32s("a == a", f32::NAN, 0.0), 0.0, "NaN != NaN");
        assert_eq!(f32s("a != a", f32::NAN, 0.0), 1.0);
        assert_eq!(f32s("a < b", f32::NAN, 1.0), 0.0);
        assert_eq!(f32s("a > b ? a : b", -1.0, -0.5), -0.5);
    }

    #[test]
    fn float_functions() {
        assert_eq!(f32s("fmin(a, b)", 1.0, -2.0), -2.0);
        assert_eq!(
            f32s("fmax(a, b)", f32::NAN, 1.0),
            1.0,
            "fmax returns the non-NaN operand"
        );
        assert_eq!(f32s("fmax(a, b)", 1.0, f32::NAN), 1.0);
        assert_eq!(f64s("fmin(a, b)", f64::NAN, 1.0), 1.0);
        assert_eq!(f64s("fmin(a, b)", 1.0, f64::NAN), 1.0);
        // min/max on floats: min is `y < x ? y : x`, max is `x < y ? y : x`.
        assert_eq!(f32s("min(a, b)", 3.0, 2.0), 2.0);
        assert_eq!(f32s("max(a, b)", 3.0, 2.0), 3.0);
        assert!(f32s("max(a, b)", f32::NAN, 1.0).is_nan());
        assert_eq!(f32s("max(a, b)", 1.0, f32::NAN), 1.0);
        assert!(f32s("min(a, b)", f32::NAN, 1.0).is_nan());
        assert_eq!(f32s("min(a, b)", 1.0, f32::NAN), 1.0);
        assert_eq!(f64s("fabs(a)", -2.5, 0.0), 2.5);
        assert_eq!(f64s("sqrt(a)", 2.0, 0.0), 2f64.sqrt());
        assert_eq!(f32s("sqrt(a)", 2.0, 0.0), 2f32.sqrt());
        assert!(f32s("sqrt(a)", -1.0, 0.0).is_nan());
        assert_eq!(f32s("hypot(a, b)", 3.0, 4.0), 5.0);
        assert_eq!(f64s("hypot(a, b)", 5.0, 12.0), 13.0);
        assert_eq!(f64s("clamp(a, 0, 1)", 1.5, 0.0), 1.0);
        assert_eq!(f64s("clamp(a, 0.0, 1.0)", -1.5, 0.0), 0.0);
        assert_eq!(f64s("clamp(a, 0, 1)", 0.25, 0.0), 0.25);
        assert_eq!(
            f32s("clamp(a, 0, 1)", f32::NAN, 0.0),
            0.0,
            "fmin(fmax(NaN, 0), 1)"
        );
        assert_eq!(f32s("fabs(a) > fabs(b) ? a : b", -3.0, 2.0), -3.0);
    }

    #[test]
    fn type_errors_name_the_type_and_position() {
        let e = eerr("a % b", F32);
        assert!(
            e.contains("column 3") && e.contains("`%`") && e.contains("f32"),
            "{e}"
        );
        for op in ["&", "|", "^", "<<", ">>"] {
            let e = eerr(&format!("a {op} b"), F64);
            assert!(e.contains("column 3") && e.contains("integer"), "{op}: {e}");
        }
        let e = eerr("~a", F32);
        assert!(e.contains("column 1") && e.contains("`~`"), "{e}");
        let e = eerr("abs(a)", F32);
        assert!(e.contains("column 1") && e.contains("fabs"), "{e}");
        for f in [
            "fmin(a, b)",
            "fmax(a, b)",
            "fabs(a)",
            "sqrt(a)",
            "hypot(a, b)",
        ] {
            let e = eerr(f, I32);
            assert!(
                e.contains("floating-point") && e.contains("i32"),
                "{f}: {e}"
            );
        }
        let e = eerr("a + 1.5", U32);
        assert!(
            e.contains("column 5") && e.contains("floating literal"),
            "{e}"
        );
        // Errors in an untaken branch still count: the device would not compile it.
        let e = eerr("1 ? a : a % b", F32);
        assert!(e.contains("column 11"), "{e}");
        let e = eerr("a", F16);
        assert!(e.contains("f16"), "{e}");
    }

    #[test]
    fn operand_types_must_match() {
        let x = Expr::parse("a + b").unwrap();
        let e = x.eval(I32, Value::U32(1), Value::I32(2)).unwrap_err();
        assert!(e.contains("`a` is u32") && e.contains("i32"), "{e}");
        let e = x.eval(F64, Value::F64(1.0), Value::F32(2.0)).unwrap_err();
        assert!(e.contains("`b` is f32"), "{e}");
    }

    #[test]
    fn parse_errors_name_position_and_expectation() {
        let e = perr("a + c");
        assert_eq!(
            e,
            "column 5: unknown name `c`; the host reference knows a, b, min, max, abs, fmin, \
             fmax, fabs, sqrt, hypot, clamp"
        );
        let e = perr("a +");
        assert!(e.starts_with("column 4: expected an operand"), "{e}");
        assert!(e.contains("end of input"), "{e}");
        let e = perr("a + * b");
        assert!(
            e.starts_with("column 5: expected an operand") && e.contains("`*`"),
            "{e}"
        );
        let e = perr("(a + b");
        assert!(
            e.starts_with("column 7: expected `)`") && e.contains("column 1"),
            "{e}"
        );
        let e = perr("a b");
        assert!(
            e.starts_with("column 3: expected an operator") && e.contains("`b`"),
            "{e}"
        );
        let e = perr("a ? b");
        assert!(
            e.starts_with("column 6: expected `:`") && e.contains("column 3"),
            "{e}"
        );
        let e = perr("max(a)");
        assert!(e.starts_with("column 1: `max` takes 2 arguments"), "{e}");
        let e = perr("clamp(a, b)");
        assert!(e.contains("clamp(x, lo, hi)"), "{e}");
        let e = perr("abs()");
        assert!(
            e.contains("takes 1 argument ") && e.contains("found 0"),
            "{e}"
        );
        let e = perr("max(a b)");
        assert!(e.starts_with("column 7: expected `,` or `)`"), "{e}");
        assert!(e.contains("call of `max` at column 1"), "{e}");
        let e = perr("max + 1");
        assert!(e.starts_with("column 1: `max` is a function"), "{e}");
        let e = perr("a(1)");
        assert!(e.starts_with("column 2: `a` is an operand"), "{e}");
        let e = perr("");
        assert!(e.contains("empty"), "{e}");
        let e = perr("   ");
        assert!(e.contains("empty"), "{e}");
        let e = perr("()");
        assert!(e.starts_with("column 2: expected an operand"), "{e}");
        let e = perr("a + b)");
        assert!(
            e.starts_with("column 6: expected an operator") && e.contains("`)`"),
            "{e}"
        );
        // Columns count characters, not bytes.
        let e = perr("é");
        assert!(e.starts_with("column 1: unexpected character `é`"), "{e}");
        let e = perr("/* c */ a");
        assert!(
            e.starts_with("column 1: expected an operand"),
            "no comments: {e}"
        );
        let e = perr("a + é");
        assert!(e.starts_with("column 5"), "{e}");
        let e = perr("a @ b");
        assert!(e.starts_with("column 3: unexpected character `@`"), "{e}");
    }

    #[test]
    fn unsupported_c_is_named() {
        let e = perr("a = b");
        assert!(
            e.starts_with("column 3: `=`") && e.contains("assignment"),
            "{e}"
        );
        let e = perr("a += b");
        assert!(e.starts_with("column 3: `+=`"), "{e}");
        let e = perr("a <<= b");
        assert!(e.starts_with("column 3: `<<=`"), "{e}");
        let e = perr("a++");
        assert!(e.starts_with("column 2: `++`"), "{e}");
        let e = perr("a--b");
        assert!(e.starts_with("column 2: `--`") && e.contains("- -"), "{e}");
        let e = perr("a + b;");
        assert!(e.starts_with("column 6: `;`"), "{e}");
        let e = perr("a[0]");
        assert!(e.starts_with("column 2: `[`"), "{e}");
        let e = perr("a.x");
        assert!(e.starts_with("column 2: `.`"), "{e}");
    }

    #[test]
    fn bad_literals() {
        let e = perr("a + 1.5L");
        assert!(
            e.starts_with("column 5") && e.contains("long double"),
            "{e}"
        );
        let e = perr("0x1p3");
        assert!(e.contains("hex floating"), "{e}");
        let e = perr("0x1p-3");
        assert!(e.contains("hex floating"), "{e}");
        let e = perr("0x1.8p1f");
        assert!(e.contains("hex floating"), "{e}");
        let e = perr("a + 08");
        assert!(e.starts_with("column 5") && e.contains("octal"), "{e}");
        let e = perr("18446744073709551616");
        assert!(e.contains("out of range"), "{e}");
        let e = perr("0x10000000000000000");
        assert!(e.contains("out of range"), "{e}");
        let e = perr("a * 2f");
        assert!(e.starts_with("column 5") && e.contains("2.0f"), "{e}");
        let e = perr("2ull");
        assert!(e.contains("invalid suffix `ull`"), "{e}");
        let e = perr("2a");
        assert!(e.contains("invalid suffix `a`"), "{e}");
        let e = perr("1.5x");
        assert!(e.contains("invalid suffix `x`"), "{e}");
        let e = perr("1e");
        assert!(e.contains("exponent"), "{e}");
        let e = perr("1e+f");
        assert!(e.contains("exponent"), "{e}");
        let e = perr("0x");
        assert!(e.contains("no digits"), "{e}");
        let e = perr("1.2.3");
        assert!(e.contains("invalid"), "{e}");
        // `0xe+1` is one preprocessing number in C, so the device rejects it too.
        let e = perr("0xe+1");
        assert!(e.contains("single"), "{e}");
        assert_eq!(i32s("0xe + 1", 0, 0), 15);
        assert_eq!(f64s("1e+1 + a", 1.0, 0.0), 11.0, "1e+1 is ten");
    }

    #[test]
    fn float_literal_forms_in_integer_combiners_are_errors() {
        // 1e+1 is a floating literal, so an integer combiner rejects it.
        let e = eerr("a + 1e1", I32);
        assert!(e.contains("floating literal"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(perr(&deep).contains("nested too deeply"));
        let long = vec!["a"; 100_000].join(" + ");
        assert!(perr(&long).contains("nested too deeply"));
        let unary = "- ".repeat(100_000) + "a";
        assert!(perr(&unary).contains("nested too deeply"));
        let moderate = vec!["a"; 200].join(" + ");
        assert_eq!(i32s(&moderate, 2, 0), 400);
        let parens = format!("{}a{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(i32s(&parens, 2, 0), 2);
    }

    #[test]
    fn whitespace_and_reuse() {
        let x = Expr::parse(" \ta\n*\r\nb ").unwrap();
        let y = x.clone();
        assert_eq!(
            y.eval(I32, Value::I32(3), Value::I32(4)).unwrap(),
            Value::I32(12)
        );
        assert_eq!(
            x.eval(F64, Value::F64(0.5), Value::F64(4.0)).unwrap(),
            Value::F64(2.0)
        );
        assert_eq!(
            x.eval(U64, Value::U64(u64::MAX), Value::U64(2)).unwrap(),
            Value::U64(u64::MAX - 1)
        );
        assert!(format!("{x:?}").contains("Expr"));
    }
}
