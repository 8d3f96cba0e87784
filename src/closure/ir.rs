//! The closure IR: what `kernel!` records of a closure body (as a compact s-expression string,
//! parsed here once per call site), and its parser. The grammar is written down in
//! design/closures.md ("The IR"); the writer is `macros/src/lower.rs`.

/// The Rust types of the subset. `Usize` is `ulong` on the device (every device clreduce runs on
/// has 64-bit `size_t`); `Bool` is OpenCL C's `bool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `i32` (`int`).
    I32,
    /// `u32` (`uint`).
    U32,
    /// `i64` (`long`).
    I64,
    /// `u64` (`ulong`).
    U64,
    /// `usize` (`ulong`).
    Usize,
    /// `f32` (`float`).
    F32,
    /// `f64` (`double`).
    F64,
    /// `bool` (`bool`).
    Bool,
}

impl Ty {
    pub(crate) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "i32" => Ty::I32,
            "u32" => Ty::U32,
            "i64" => Ty::I64,
            "u64" => Ty::U64,
            "usize" => Ty::Usize,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "bool" => Ty::Bool,
            _ => return None,
        })
    }
    /// The Rust spelling.
    pub fn name(self) -> &'static str {
        match self {
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::I64 => "i64",
            Ty::U64 => "u64",
            Ty::Usize => "usize",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Bool => "bool",
        }
    }
    /// The OpenCL C spelling.
    pub fn cl(self) -> &'static str {
        match self {
            Ty::I32 => "int",
            Ty::U32 => "uint",
            Ty::I64 => "long",
            Ty::U64 | Ty::Usize => "ulong",
            Ty::F32 => "float",
            Ty::F64 => "double",
            Ty::Bool => "bool",
        }
    }
    pub(crate) fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }
    pub(crate) fn is_int(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::I64 | Ty::U64 | Ty::Usize)
    }
    pub(crate) fn of_elem(e: crate::ElemType) -> Option<Ty> {
        use crate::ElemType as E;
        Some(match e {
            E::I32 => Ty::I32,
            E::U32 => Ty::U32,
            E::I64 => Ty::I64,
            E::U64 => Ty::U64,
            E::F32 => Ty::F32,
            E::F64 => Ty::F64,
            E::F16 | E::BF16 => return None,
        })
    }
}

/// What the closure's first parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `i: usize`, the linear id (the string form's `i`).
    Linear,
    /// `item: Item` (`item.id[d]`, `item.range[d]`, `item.linear_id`).
    Item,
    /// `it: NdItem` (`it.local_id(d)`, ...): the nd_range form only.
    Nd,
}

/// How the body uses a reducer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedUse {
    /// Not at all.
    None,
    /// `*r op= v` or `r.combine(v)`.
    Plain,
    /// `r.combine(value, index)` (argmin / argmax).
    Arg,
    /// `r[k] op= v` or `r[k].combine(v)` (a span).
    Span,
}

/// How the body uses a captured variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapUse {
    /// As a value (a scalar argument).
    Scalar,
    /// Indexed, never assigned (a read-only buffer).
    Read,
    /// Indexed and assigned (`y[k] = v`): a writable buffer.
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    fn parse(s: &str) -> Option<BinOp> {
        use BinOp::*;
        Some(match s {
            "+" => Add,
            "-" => Sub,
            "*" => Mul,
            "/" => Div,
            "%" => Rem,
            "&" => BitAnd,
            "|" => BitOr,
            "^" => BitXor,
            "<<" => Shl,
            ">>" => Shr,
            "==" => Eq,
            "!=" => Ne,
            "<" => Lt,
            "<=" => Le,
            ">" => Gt,
            ">=" => Ge,
            "&&" => And,
            "||" => Or,
            _ => return None,
        })
    }
    pub fn c(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
    pub(crate) fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
    pub(crate) fn is_cmp(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
    pub(crate) fn is_logic(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// An expression; `slot` is its type variable in inference.
#[derive(Debug, Clone)]
pub struct Expr {
    pub slot: usize,
    pub kind: ExprKind,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An integer literal (its digits in base 10) and its suffix.
    Int(u128, Option<Ty>),
    /// A float literal as written (base 10, no suffix) and its suffix.
    Float(String, Option<Ty>),
    Bool(bool),
    Local(usize),
    Cap(usize),
    /// The linear id.
    Id,
    /// `cap[index]`.
    Index(usize, Box<Expr>),
    /// `item.id[d]`.
    ItemId(Box<Expr>),
    /// `item.range[d]`.
    ItemRange(Box<Expr>),
    ItemLinear,
    /// An nd-item method and its dimension argument.
    Nd(String, Option<Box<Expr>>),
    Un(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Cast(Ty, Box<Expr>),
    /// A math function (method or path form, receiver first) and the receiver's type when the
    /// path names it (`f32::sqrt(x)`).
    Call(String, Option<Ty>, Vec<Expr>),
    /// `f32::MAX`, `std::f64::consts::PI`, ...
    Const(Ty, String),
    /// `if c { a } else { b }` as a value.
    IfX(Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone)]
pub enum Place {
    Local(usize),
    Index(usize, Expr),
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Let(usize, Option<Ty>, Option<Expr>),
    Set(Place, Expr),
    OpSet(BinOp, Place, Expr),
    /// `*r op= v`.
    Red(usize, BinOp, Expr),
    /// `r.combine(v)`.
    Comb(usize, Expr),
    /// `r.combine(v, j)`.
    Comb2(usize, Expr, Expr),
    /// `r[k] op= v`.
    SpanRed(usize, Expr, BinOp, Expr),
    /// `r[k].combine(v)`.
    SpanComb(usize, Expr, Expr),
    If(Expr, Vec<Stmt>, Option<Vec<Stmt>>),
    /// `for l in start..end` (`..=` when inclusive), optionally `.step_by(step)`.
    For {
        var: usize,
        start: Expr,
        end: Expr,
        inclusive: bool,
        step: Option<Expr>,
        body: Vec<Stmt>,
    },
    While(Expr, Vec<Stmt>),
    Loop(Vec<Stmt>),
    Break,
    Continue,
    Return,
    Block(Vec<Stmt>),
}

/// A parsed closure.
#[derive(Debug, Clone)]
pub struct Ir {
    pub id: IdKind,
    pub reds: Vec<(String, RedUse)>,
    pub caps: Vec<(String, CapUse)>,
    /// Locals (let bindings and loop variables) by index: the Rust name and whether it is
    /// `mut`.
    pub locals: Vec<(String, bool)>,
    pub body: Vec<Stmt>,
    /// Number of expression slots.
    pub slots: usize,
}

/// An s-expression.
#[derive(Debug, Clone)]
enum Sx {
    Atom(String),
    List(Vec<Sx>),
}

fn tokenize(s: &str) -> Result<Sx, String> {
    let mut stack: Vec<Vec<Sx>> = vec![Vec::new()];
    let mut atom = String::new();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sx>>| {
        if !atom.is_empty() {
            if let Some(top) = stack.last_mut() {
                top.push(Sx::Atom(std::mem::take(atom)));
            }
        }
    };
    for c in s.chars() {
        match c {
            '(' => {
                flush(&mut atom, &mut stack);
                stack.push(Vec::new());
            }
            ')' => {
                flush(&mut atom, &mut stack);
                let done = stack.pop().ok_or("unbalanced ')'")?;
                stack
                    .last_mut()
                    .ok_or("unbalanced ')'")?
                    .push(Sx::List(done));
            }
            c if c.is_whitespace() => flush(&mut atom, &mut stack),
            c => atom.push(c),
        }
    }
    flush(&mut atom, &mut stack);
    let mut top = stack.pop().ok_or("empty IR")?;
    if !stack.is_empty() || top.len() != 1 {
        return Err("unbalanced IR".into());
    }
    Ok(top.remove(0))
}

impl Sx {
    fn atom(&self) -> Result<&str, String> {
        match self {
            Sx::Atom(a) => Ok(a),
            Sx::List(_) => Err("expected an atom".into()),
        }
    }
    fn list(&self) -> Result<&[Sx], String> {
        match self {
            Sx::List(l) => Ok(l),
            Sx::Atom(a) => Err(format!("expected a list, found {a}")),
        }
    }
    /// A list whose head is `tag`: the rest.
    fn tagged(&self, tag: &str) -> Result<&[Sx], String> {
        let l = self.list()?;
        match l.first() {
            Some(Sx::Atom(h)) if h == tag => Ok(&l[1..]),
            _ => Err(format!("expected ({tag} ...)")),
        }
    }
    fn head(&self) -> Result<(&str, &[Sx]), String> {
        let l = self.list()?;
        let h = l.first().ok_or("empty list")?.atom()?;
        Ok((h, &l[1..]))
    }
}

fn index(s: &Sx) -> Result<usize, String> {
    s.atom()?
        .parse()
        .map_err(|_| "expected an index".to_string())
}

fn opt_ty(s: &Sx) -> Result<Option<Ty>, String> {
    match s.atom()? {
        "_" => Ok(None),
        t => Ty::parse(t)
            .map(Some)
            .ok_or_else(|| format!("unknown type {t}")),
    }
}

fn arg(args: &[Sx], k: usize) -> Result<&Sx, String> {
    args.get(k).ok_or_else(|| "missing operand".to_string())
}

struct Parser {
    slots: usize,
}

impl Parser {
    fn expr(&mut self, s: &Sx) -> Result<Expr, String> {
        let (h, a) = s.head()?;
        let bx = |p: &mut Parser, k: usize| -> Result<Box<Expr>, String> {
            Ok(Box::new(p.expr(arg(a, k)?)?))
        };
        let kind = match h {
            "int" => ExprKind::Int(
                arg(a, 0)?
                    .atom()?
                    .parse()
                    .map_err(|_| "bad integer literal")?,
                opt_ty(arg(a, 1)?)?,
            ),
            "float" => ExprKind::Float(arg(a, 0)?.atom()?.to_string(), opt_ty(arg(a, 1)?)?),
            "bool" => ExprKind::Bool(arg(a, 0)?.atom()? == "true"),
            "loc" => ExprKind::Local(index(arg(a, 0)?)?),
            "cap" => ExprKind::Cap(index(arg(a, 0)?)?),
            "id" => ExprKind::Id,
            "idx" => ExprKind::Index(index(arg(a, 0)?)?, bx(self, 1)?),
            "item" => match arg(a, 0)?.atom()? {
                "id" => ExprKind::ItemId(bx(self, 1)?),
                "range" => ExprKind::ItemRange(bx(self, 1)?),
                "linear" => ExprKind::ItemLinear,
                f => return Err(format!("unknown item field {f}")),
            },
            "nd" => ExprKind::Nd(
                arg(a, 0)?.atom()?.to_string(),
                match a.get(1) {
                    Some(d) => Some(Box::new(self.expr(d)?)),
                    None => None,
                },
            ),
            "un" => ExprKind::Un(
                match arg(a, 0)?.atom()? {
                    "neg" => UnOp::Neg,
                    "not" => UnOp::Not,
                    o => return Err(format!("unknown unary op {o}")),
                },
                bx(self, 1)?,
            ),
            "bin" => {
                let op = arg(a, 0)?.atom()?;
                ExprKind::Bin(
                    BinOp::parse(op).ok_or_else(|| format!("unknown op {op}"))?,
                    bx(self, 1)?,
                    bx(self, 2)?,
                )
            }
            "cast" => ExprKind::Cast(opt_ty(arg(a, 0)?)?.ok_or("cast to _")?, bx(self, 1)?),
            "call" => ExprKind::Call(
                arg(a, 0)?.atom()?.to_string(),
                opt_ty(arg(a, 1)?)?,
                a[2..]
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<_, _>>()?,
            ),
            "const" => ExprKind::Const(
                opt_ty(arg(a, 0)?)?.ok_or("const of _")?,
                arg(a, 1)?.atom()?.to_string(),
            ),
            "ifx" => ExprKind::IfX(bx(self, 0)?, bx(self, 1)?, bx(self, 2)?),
            other => return Err(format!("unknown expression ({other} ...)")),
        };
        let slot = self.slots;
        self.slots += 1;
        Ok(Expr { slot, kind })
    }

    fn place(&mut self, s: &Sx) -> Result<Place, String> {
        let (h, a) = s.head()?;
        match h {
            "loc" => Ok(Place::Local(index(arg(a, 0)?)?)),
            "idx" => Ok(Place::Index(index(arg(a, 0)?)?, self.expr(arg(a, 1)?)?)),
            other => Err(format!("not a place: ({other} ...)")),
        }
    }

    fn block(&mut self, s: &Sx) -> Result<Vec<Stmt>, String> {
        s.tagged("do")?.iter().map(|x| self.stmt(x)).collect()
    }

    fn opt_block(&mut self, s: &Sx) -> Result<Option<Vec<Stmt>>, String> {
        match s {
            Sx::Atom(a) if a == "_" => Ok(None),
            s => self.block(s).map(Some),
        }
    }

    fn opt_expr(&mut self, s: &Sx) -> Result<Option<Expr>, String> {
        match s {
            Sx::Atom(a) if a == "_" => Ok(None),
            s => self.expr(s).map(Some),
        }
    }

    fn binop(s: &Sx) -> Result<BinOp, String> {
        let o = s.atom()?;
        BinOp::parse(o).ok_or_else(|| format!("unknown op {o}"))
    }

    fn stmt(&mut self, s: &Sx) -> Result<Stmt, String> {
        let (h, a) = s.head()?;
        Ok(match h {
            "let" => Stmt::Let(
                index(arg(a, 0)?)?,
                opt_ty(arg(a, 1)?)?,
                self.opt_expr(arg(a, 2)?)?,
            ),
            "set" => Stmt::Set(self.place(arg(a, 0)?)?, self.expr(arg(a, 1)?)?),
            "opset" => Stmt::OpSet(
                Self::binop(arg(a, 0)?)?,
                self.place(arg(a, 1)?)?,
                self.expr(arg(a, 2)?)?,
            ),
            "red" => Stmt::Red(
                index(arg(a, 0)?)?,
                Self::binop(arg(a, 1)?)?,
                self.expr(arg(a, 2)?)?,
            ),
            "comb" => Stmt::Comb(index(arg(a, 0)?)?, self.expr(arg(a, 1)?)?),
            "comb2" => Stmt::Comb2(
                index(arg(a, 0)?)?,
                self.expr(arg(a, 1)?)?,
                self.expr(arg(a, 2)?)?,
            ),
            "sred" => Stmt::SpanRed(
                index(arg(a, 0)?)?,
                self.expr(arg(a, 1)?)?,
                Self::binop(arg(a, 2)?)?,
                self.expr(arg(a, 3)?)?,
            ),
            "scomb" => Stmt::SpanComb(
                index(arg(a, 0)?)?,
                self.expr(arg(a, 1)?)?,
                self.expr(arg(a, 2)?)?,
            ),
            "if" => Stmt::If(
                self.expr(arg(a, 0)?)?,
                self.block(arg(a, 1)?)?,
                self.opt_block(arg(a, 2)?)?,
            ),
            "for" => Stmt::For {
                var: index(arg(a, 0)?)?,
                start: self.expr(arg(a, 1)?)?,
                end: self.expr(arg(a, 2)?)?,
                inclusive: arg(a, 3)?.atom()? == "1",
                step: self.opt_expr(arg(a, 4)?)?,
                body: self.block(arg(a, 5)?)?,
            },
            "while" => Stmt::While(self.expr(arg(a, 0)?)?, self.block(arg(a, 1)?)?),
            "loop" => Stmt::Loop(self.block(arg(a, 0)?)?),
            "break" => Stmt::Break,
            "continue" => Stmt::Continue,
            "return" => Stmt::Return,
            "do" => Stmt::Block(self.block(s)?),
            other => return Err(format!("unknown statement ({other} ...)")),
        })
    }
}

/// Parses the IR string `kernel!` wrote.
pub fn parse(src: &str) -> Result<Ir, String> {
    let sx = tokenize(src)?;
    let parts = sx.tagged("closure")?;
    let id = match arg(parts, 0)?
        .tagged("id")?
        .first()
        .ok_or("no id kind")?
        .atom()?
    {
        "usize" => IdKind::Linear,
        "item" => IdKind::Item,
        "nd" => IdKind::Nd,
        k => return Err(format!("unknown id kind {k}")),
    };
    let pairs = |s: &Sx, tag: &str| -> Result<Vec<(String, String)>, String> {
        s.tagged(tag)?
            .iter()
            .map(|p| {
                let l = p.list()?;
                Ok((
                    arg(l, 0)?.atom()?.to_string(),
                    arg(l, 1)?.atom()?.to_string(),
                ))
            })
            .collect()
    };
    let reds = pairs(arg(parts, 1)?, "reds")?
        .into_iter()
        .map(|(n, u)| {
            let u = match u.as_str() {
                "none" => RedUse::None,
                "plain" => RedUse::Plain,
                "arg" => RedUse::Arg,
                "span" => RedUse::Span,
                u => return Err(format!("unknown reducer use {u}")),
            };
            Ok((n, u))
        })
        .collect::<Result<_, String>>()?;
    let caps = pairs(arg(parts, 2)?, "caps")?
        .into_iter()
        .map(|(n, u)| {
            let u = match u.as_str() {
                "scalar" => CapUse::Scalar,
                "read" => CapUse::Read,
                "write" => CapUse::Write,
                u => return Err(format!("unknown capture use {u}")),
            };
            Ok((n, u))
        })
        .collect::<Result<_, String>>()?;
    let locals = pairs(arg(parts, 3)?, "locals")?
        .into_iter()
        .map(|(n, m)| (n, m == "1"))
        .collect();
    let mut p = Parser { slots: 0 };
    let body = p.block(arg(parts, 4)?)?;
    Ok(Ir {
        id,
        reds,
        caps,
        locals,
        body,
        slots: p.slots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_a_body() {
        let ir = parse(
            "(closure (id usize) (reds (sum plain)) (caps (x read)) (locals (v 0)) \
             (do (let 0 _ (bin * (idx 0 (id)) (float 2.0 _))) (red 0 + (loc 0))))",
        )
        .unwrap();
        assert_eq!(ir.id, IdKind::Linear);
        assert_eq!(ir.reds, vec![("sum".to_string(), RedUse::Plain)]);
        assert_eq!(ir.caps, vec![("x".to_string(), CapUse::Read)]);
        assert_eq!(ir.body.len(), 2);
        assert_eq!(ir.slots, 5);
        assert!(parse("(closure (id usize)").is_err());
        assert!(parse("(closure (id usize) (reds) (caps) (locals) (do (frob)))").is_err());
    }
}
