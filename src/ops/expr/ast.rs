//! The expression tree of a combiner, and the tables of its operators and functions.

/// Deepest nesting of the expression tree (and of the parser's recursion).
pub(super) const MAX_DEPTH: u32 = 256;

/// The names the host reference knows, for error messages.
pub(super) const KNOWN: &str = "a, b, min, max, abs, fmin, fmax, fabs, sqrt, hypot, clamp";

#[derive(Debug, Clone)]
pub(super) struct Node {
    /// Byte offset in the source of the token that names the node (operator, literal, call).
    pub(super) pos: usize,
    /// Height of the subtree (a leaf is 1).
    pub(super) depth: u32,
    pub(super) kind: Kind,
}

#[derive(Debug, Clone)]
pub(super) enum Kind {
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
pub(super) enum FloatLit {
    Single(f32),
    Double(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
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
    pub(super) fn symbol(self) -> &'static str {
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
    pub(super) fn integer_only(self) -> bool {
        matches!(
            self,
            BinOp::Rem | BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitXor | BinOp::BitOr
        )
    }
}

/// Binary operators by precedence level, loosest first; all are left-associative.
pub(super) const LEVELS: [&[(&str, BinOp)]; 10] = [
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
pub(super) enum Func {
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
pub(super) enum Domain {
    Any,
    Integer,
    Floating,
}

/// name, function, arity, domain, call signature
pub(super) const FUNCS: [(&str, Func, usize, Domain, &str); 9] = [
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

pub(super) fn func_info(f: Func) -> (&'static str, Func, usize, Domain, &'static str) {
    FUNCS
        .into_iter()
        .find(|e| e.1 == f)
        .expect("every function is in FUNCS")
}

/// 1-based column (in characters) of a byte offset.
pub(super) fn column(src: &str, pos: usize) -> usize {
    src[..pos].chars().count() + 1
}
