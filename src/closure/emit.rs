//! The OpenCL C emitter: a typed closure IR becomes the body a hand-written string would be
//! (`sum += x[i] * 2.0f;`), with literal suffixes and casts from the inferred types, Rust's
//! `as` semantics (float to integer saturates: `convert_int_sat`), C precedence with the
//! parentheses it needs, and the reducers written as the string form writes them (`sum += v`,
//! `sum_combine(v)`, `best_combine(v, j)`, `hist[k] += v`), so the launch checks them as it
//! checks any body. A few preprocessor lines at the top check, when the program is built, that
//! each reducer is the kind and type the closure was type-checked with.

use super::infer::{is_float_rem, CapTy, Typing};
use super::ir::{BinOp, Expr, ExprKind, IdKind, Ir, Place, Stmt, Ty, UnOp};
use super::names::Names;
use super::RedKind;

/// A generated body and the names it gives the captures and reducers.
#[derive(Debug, Clone)]
pub struct Emitted {
    pub body: String,
    pub caps: Vec<String>,
    pub reds: Vec<String>,
}

/// A constant value, for literals and folding (`-1`, `2.5 as f32`, `f32::MAX`).
#[derive(Debug, Clone, Copy)]
enum Lit {
    Int(i128),
    F32(f32),
    F64(f64),
    Bool(bool),
}

fn wrap(v: i128, t: Ty) -> i128 {
    match t {
        Ty::I32 => v as i32 as i128,
        Ty::U32 => v as u32 as i128,
        Ty::I64 => v as i64 as i128,
        Ty::U64 | Ty::Usize => v as u64 as i128,
        _ => v,
    }
}

/// Rust's `as` on a constant.
fn convert(l: Lit, to: Ty) -> Lit {
    let int = |f: f64| -> i128 {
        match to {
            Ty::I32 => f as i32 as i128,
            Ty::U32 => f as u32 as i128,
            Ty::I64 => f as i64 as i128,
            _ => f as u64 as i128,
        }
    };
    match (l, to) {
        (Lit::Int(v), t) if t.is_int() => Lit::Int(wrap(v, t)),
        (Lit::Int(v), Ty::F32) => Lit::F32(v as f32),
        (Lit::Int(v), _) => Lit::F64(v as f64),
        (Lit::F32(f), t) if t.is_int() => Lit::Int(int(f as f64)),
        (Lit::F32(f), Ty::F64) => Lit::F64(f as f64),
        (Lit::F64(f), t) if t.is_int() => Lit::Int(int(f)),
        (Lit::F64(f), Ty::F32) => Lit::F32(f as f32),
        (Lit::Bool(b), t) if t.is_int() => Lit::Int(b as i128),
        (l, _) => l,
    }
}

fn constant(t: Ty, name: &str) -> Option<Lit> {
    use std::f64::consts as c64;
    let float = |v32: f32, v64: f64| {
        if t == Ty::F32 {
            Lit::F32(v32)
        } else {
            Lit::F64(v64)
        }
    };
    let int_range = |max: bool| -> i128 {
        match (t, max) {
            (Ty::I32, true) => i32::MAX as i128,
            (Ty::I32, false) => i32::MIN as i128,
            (Ty::I64, true) => i64::MAX as i128,
            (Ty::I64, false) => i64::MIN as i128,
            (Ty::U32, true) => u32::MAX as i128,
            (Ty::U64 | Ty::Usize, true) => u64::MAX as i128,
            _ => 0,
        }
    };
    if t.is_int() {
        return match name {
            "MAX" => Some(Lit::Int(int_range(true))),
            "MIN" => Some(Lit::Int(int_range(false))),
            "BITS" => Some(Lit::Int(if matches!(t, Ty::I32 | Ty::U32) {
                32
            } else {
                64
            })),
            _ => None,
        };
    }
    Some(match name {
        "MAX" => float(f32::MAX, f64::MAX),
        "MIN" => float(f32::MIN, f64::MIN),
        "INFINITY" => float(f32::INFINITY, f64::INFINITY),
        "NEG_INFINITY" => float(f32::NEG_INFINITY, f64::NEG_INFINITY),
        "NAN" => float(f32::NAN, f64::NAN),
        "EPSILON" => float(f32::EPSILON, f64::EPSILON),
        "MIN_POSITIVE" => float(f32::MIN_POSITIVE, f64::MIN_POSITIVE),
        "PI" => float(std::f32::consts::PI, c64::PI),
        "TAU" => float(std::f32::consts::TAU, c64::TAU),
        "E" => float(std::f32::consts::E, c64::E),
        "SQRT_2" => float(std::f32::consts::SQRT_2, c64::SQRT_2),
        "LN_2" => float(std::f32::consts::LN_2, c64::LN_2),
        "LN_10" => float(std::f32::consts::LN_10, c64::LN_10),
        "LOG2_E" => float(std::f32::consts::LOG2_E, c64::LOG2_E),
        "LOG10_E" => float(std::f32::consts::LOG10_E, c64::LOG10_E),
        "LOG2_10" => float(std::f32::consts::LOG2_10, c64::LOG2_10),
        "LOG10_2" => float(std::f32::consts::LOG10_2, c64::LOG10_2),
        "FRAC_PI_2" => float(std::f32::consts::FRAC_PI_2, c64::FRAC_PI_2),
        "FRAC_PI_3" => float(std::f32::consts::FRAC_PI_3, c64::FRAC_PI_3),
        "FRAC_PI_4" => float(std::f32::consts::FRAC_PI_4, c64::FRAC_PI_4),
        "FRAC_PI_6" => float(std::f32::consts::FRAC_PI_6, c64::FRAC_PI_6),
        "FRAC_PI_8" => float(std::f32::consts::FRAC_PI_8, c64::FRAC_PI_8),
        "FRAC_1_PI" => float(std::f32::consts::FRAC_1_PI, c64::FRAC_1_PI),
        "FRAC_2_PI" => float(std::f32::consts::FRAC_2_PI, c64::FRAC_2_PI),
        "FRAC_2_SQRT_PI" => float(std::f32::consts::FRAC_2_SQRT_PI, c64::FRAC_2_SQRT_PI),
        "FRAC_1_SQRT_2" => float(std::f32::consts::FRAC_1_SQRT_2, c64::FRAC_1_SQRT_2),
        _ => return None,
    })
}

/// A float literal: the shortest decimal that reads back as the same value.
fn float_text(v: f64, repr: String, suffix: &str) -> (String, u8) {
    if v.is_nan() {
        ("NAN".into(), 0)
    } else if v.is_infinite() {
        if v > 0.0 {
            ("INFINITY".into(), 0)
        } else {
            ("-INFINITY".into(), 2)
        }
    } else {
        let neg = repr.starts_with('-');
        (format!("{repr}{suffix}"), if neg { 2 } else { 0 })
    }
}

/// A constant as an OpenCL C literal of type `t`, with its precedence.
fn render(l: Lit, t: Ty) -> (String, u8) {
    match l {
        Lit::Bool(b) => (b.to_string(), 0),
        Lit::F32(f) => float_text(f as f64, format!("{f:?}"), "f"),
        Lit::F64(f) => float_text(f, format!("{f:?}"), ""),
        Lit::Int(v) => {
            let v = wrap(v, t);
            let (text, neg) = match t {
                Ty::I32 if v == i32::MIN as i128 => ("INT_MIN".to_string(), false),
                Ty::I64 if v == i64::MIN as i128 => ("LONG_MIN".to_string(), false),
                Ty::I32 => (v.to_string(), v < 0),
                Ty::U32 => (format!("{v}u"), false),
                Ty::I64 => (format!("{v}L"), v < 0),
                _ => (format!("{v}UL"), false),
            };
            (text, if neg { 2 } else { 0 })
        }
    }
}

/// C precedence of a binary operator (smaller binds tighter; 0 primary, 2 unary).
fn prec(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Mul | Div | Rem => 3,
        Add | Sub => 4,
        Shl | Shr => 5,
        Lt | Le | Gt | Ge => 6,
        Eq | Ne => 7,
        BitAnd => 8,
        BitXor => 9,
        BitOr => 10,
        And => 11,
        Or => 12,
    }
}

fn type_code(t: Ty) -> u8 {
    match t {
        Ty::I32 => 1,
        Ty::U32 => 2,
        Ty::I64 => 3,
        Ty::U64 | Ty::Usize => 4,
        Ty::F32 => 5,
        Ty::F64 => 6,
        Ty::Bool => 7,
    }
}

struct Em<'a> {
    ir: &'a Ir,
    t: &'a Typing,
    names: Names,
    red: Vec<String>,
    cap: Vec<String>,
    loc: Vec<String>,
    out: String,
    depth: usize,
}

type R<T> = Result<T, String>;

impl Em<'_> {
    fn ty(&self, e: &Expr) -> Ty {
        self.t.expr[e.slot]
    }

    fn lit(&self, e: &Expr) -> Option<Lit> {
        let t = self.ty(e);
        match &e.kind {
            ExprKind::Int(v, _) => Some(Lit::Int(wrap(*v as i128, t))),
            ExprKind::Float(s, _) => match t {
                Ty::F32 => s.parse::<f32>().ok().map(Lit::F32),
                _ => s.parse::<f64>().ok().map(Lit::F64),
            },
            ExprKind::Bool(b) => Some(Lit::Bool(*b)),
            ExprKind::Const(ct, name) => constant(*ct, name),
            ExprKind::Un(UnOp::Neg, x) => match self.lit(x)? {
                Lit::Int(v) => Some(Lit::Int(wrap(v.wrapping_neg(), t))),
                Lit::F32(f) => Some(Lit::F32(-f)),
                Lit::F64(f) => Some(Lit::F64(-f)),
                Lit::Bool(_) => None,
            },
            ExprKind::Un(UnOp::Not, x) => match self.lit(x)? {
                Lit::Int(v) => Some(Lit::Int(wrap(!v, t))),
                Lit::Bool(b) => Some(Lit::Bool(!b)),
                _ => None,
            },
            ExprKind::Cast(to, x) => Some(convert(self.lit(x)?, *to)),
            _ => None,
        }
    }

    /// `e` with parentheses when it binds looser than `max` allows.
    fn at(&mut self, e: &Expr, max: u8) -> R<String> {
        let (s, p) = self.ex(e)?;
        Ok(if p > max { format!("({s})") } else { s })
    }

    /// `e` as an operand that must be 64 bits wide: the id `i` is `uint` in launches of up to
    /// 2^32 items, so it is widened where C would otherwise compute in 32 bits.
    fn wide(&mut self, e: &Expr, max: u8) -> R<String> {
        if matches!(e.kind, ExprKind::Id) {
            return Ok(if max < 2 {
                "((ulong)i)".into()
            } else {
                "(ulong)i".into()
            });
        }
        self.at(e, max)
    }

    fn ex(&mut self, e: &Expr) -> R<(String, u8)> {
        if let Some(l) = self.lit(e) {
            return Ok(render(l, self.ty(e)));
        }
        Ok(match &e.kind {
            ExprKind::Local(l) => (self.loc[*l].clone(), 0),
            ExprKind::Cap(c) => (self.cap[*c].clone(), 0),
            ExprKind::Id => ("i".into(), 0),
            ExprKind::Index(c, ix) => {
                let ix = self.at(ix, 13)?;
                (format!("{}[{ix}]", self.cap[*c]), 0)
            }
            ExprKind::ItemId(d) => (format!("item.id[{}]", self.at(d, 13)?), 0),
            ExprKind::ItemRange(d) => (format!("item.range[{}]", self.at(d, 13)?), 0),
            ExprKind::ItemLinear => ("item.linear_id".into(), 0),
            ExprKind::Nd(m, d) => self.nd(m, d.as_deref())?,
            ExprKind::Un(op, x) => {
                let sign = match op {
                    UnOp::Neg => "-",
                    UnOp::Not if self.ty(x) == Ty::Bool => "!",
                    UnOp::Not => "~",
                };
                let inner = self.wide(x, 2)?;
                let inner = if inner.starts_with(['-', '!', '~']) {
                    format!("({inner})")
                } else {
                    inner
                };
                (format!("{sign}{inner}"), 2)
            }
            ExprKind::Bin(op, a, b) => self.bin(*op, a, b)?,
            ExprKind::Cast(t, x) => self.cast(*t, x)?,
            ExprKind::Call(name, _, args) => self.call(name, args)?,
            ExprKind::IfX(c, a, b) => {
                let c = self.at(c, 12)?;
                let a = self.at(a, 12)?;
                let b = self.at(b, 12)?;
                (format!("{c} ? {a} : {b}"), 13)
            }
            ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::Bool(_) | ExprKind::Const(..) => {
                return Err("an unreadable constant".into())
            }
        })
    }

    fn bin(&mut self, op: BinOp, a: &Expr, b: &Expr) -> R<(String, u8)> {
        if is_float_rem(op, self.ty(a)) {
            let (x, y) = (self.at(a, 13)?, self.at(b, 13)?);
            return Ok((format!("fmod({x}, {y})"), 0));
        }
        let p = prec(op);
        let both_id = matches!(a.kind, ExprKind::Id) && matches!(b.kind, ExprKind::Id);
        // Bit, shift and logic operators get parentheses around other binary operators, as a
        // reader (and clang's -Wparentheses) expects.
        let clarity = |e: &Expr| {
            matches!(&e.kind, ExprKind::Bin(o, ..) if *o != op)
                && (matches!(
                    op,
                    BinOp::BitAnd
                        | BinOp::BitOr
                        | BinOp::BitXor
                        | BinOp::Shl
                        | BinOp::Shr
                        | BinOp::Or
                ) || matches!(&e.kind, ExprKind::Bin(o, ..) if matches!(o, BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)))
        };
        let left_max = if clarity(a) { 1 } else { p };
        let right_max = if clarity(b) { 1 } else { p - 1 };
        let wide_left = (op.is_shift() || both_id) && !op.is_cmp();
        let x = if wide_left {
            self.wide(a, left_max)?
        } else {
            self.at(a, left_max)?
        };
        let y = self.at(b, right_max)?;
        Ok((format!("{x} {} {y}", op.c()), p))
    }

    fn cast(&mut self, to: Ty, x: &Expr) -> R<(String, u8)> {
        let from = self.ty(x);
        let wide64 = |t: Ty| matches!(t, Ty::U64 | Ty::Usize);
        if matches!(x.kind, ExprKind::Id) && wide64(to) {
            return Ok(("(ulong)i".into(), 2));
        }
        if from == to || (wide64(from) && wide64(to)) {
            return self.ex(x);
        }
        if from.is_float() && to.is_int() {
            // Rust's `as` truncates toward zero and saturates, NaN giving 0: OpenCL's _sat
            // conversions do exactly that.
            return Ok((format!("convert_{}_sat({})", to.cl(), self.at(x, 13)?), 0));
        }
        Ok((format!("({}){}", to.cl(), self.at(x, 2)?), 2))
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> R<(String, u8)> {
        let recv = args.first().ok_or("a call without a receiver")?;
        let rt = self.ty(recv);
        let mut a = Vec::new();
        for x in args {
            a.push(self.wide(x, 13)?);
        }
        let plain = |f: &str| (format!("{f}({})", a.join(", ")), 0);
        let float = rt.is_float();
        Ok(match name {
            "sqrt" | "cbrt" | "exp" | "exp2" | "log2" | "log10" | "sin" | "cos" | "tan"
            | "asin" | "acos" | "atan" | "atan2" | "sinh" | "cosh" | "tanh" | "asinh" | "acosh"
            | "atanh" | "floor" | "ceil" | "round" | "trunc" | "hypot" | "copysign" | "clamp" => {
                plain(name)
            }
            "exp_m1" => plain("expm1"),
            "ln" => plain("log"),
            "ln_1p" => plain("log1p"),
            "powf" => plain("pow"),
            "powi" => plain("pown"),
            "mul_add" => plain("fma"),
            "to_degrees" => plain("degrees"),
            "to_radians" => plain("radians"),
            "is_nan" => plain("isnan"),
            "is_finite" => plain("isfinite"),
            "is_infinite" => plain("isinf"),
            "abs" if float => plain("fabs"),
            "min" if float => plain("fmin"),
            "max" if float => plain("fmax"),
            "min" | "max" => plain(name),
            // OpenCL's abs of a signed integer is unsigned; Rust's keeps the type.
            "abs" => (format!("({})abs({})", rt.cl(), a[0]), 2),
            "recip" => {
                let one = if rt == Ty::F32 { "1.0f" } else { "1.0" };
                (format!("{one} / {}", self.at(recv, 2)?), 3)
            }
            "count_ones" => (format!("(uint)popcount({})", a[0]), 2),
            "leading_zeros" => (format!("(uint)clz({})", a[0]), 2),
            "rotate_left" => {
                let n = args.get(1).ok_or("rotate_left without a count")?;
                (
                    format!("rotate({}, ({}){})", a[0], rt.cl(), self.at(n, 2)?),
                    0,
                )
            }
            other => return Err(format!("unknown function {other}")),
        })
    }

    fn nd(&mut self, m: &str, d: Option<&Expr>) -> R<(String, u8)> {
        let f = match m {
            "global_id" => "get_global_id",
            "local_id" => "get_local_id",
            "group_id" => "get_group_id",
            "global_range" => "get_global_size",
            "local_range" => "get_local_size",
            "group_range" => "get_num_groups",
            "global_linear_id" => return Ok(("(ulong)i".into(), 2)),
            "local_linear_id" => {
                return Ok(("((get_local_id(0) * get_local_size(1) + get_local_id(1)) * get_local_size(2) + get_local_id(2))".into(), 0))
            }
            "group_linear_id" => {
                return Ok(("((get_group_id(0) * get_num_groups(1) + get_group_id(1)) * get_num_groups(2) + get_group_id(2))".into(), 0))
            }
            other => return Err(format!("unknown nd-item method {other}")),
        };
        let d = d.ok_or_else(|| format!("{m} without a dimension"))?;
        Ok((format!("{f}({})", self.at(d, 13)?), 0))
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn place(&mut self, p: &Place) -> R<String> {
        Ok(match p {
            Place::Local(l) => self.loc[*l].clone(),
            Place::Index(c, ix) => {
                let ix = self.at(ix, 13)?;
                format!("{}[{ix}]", self.cap[*c])
            }
        })
    }

    fn block(&mut self, head: &str, body: &[Stmt]) -> R<()> {
        self.line(&format!("{head}{{"));
        self.depth += 1;
        self.stmts(body)?;
        self.depth -= 1;
        Ok(())
    }

    fn stmts(&mut self, body: &[Stmt]) -> R<()> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn reads_mutable(&self, e: &Expr) -> bool {
        let sub = |x: &Expr| self.reads_mutable(x);
        match &e.kind {
            ExprKind::Local(l) => self.ir.locals[*l].1,
            ExprKind::Index(_, x)
            | ExprKind::ItemId(x)
            | ExprKind::ItemRange(x)
            | ExprKind::Un(_, x)
            | ExprKind::Cast(_, x) => sub(x),
            ExprKind::Nd(_, x) => x.as_deref().is_some_and(sub),
            ExprKind::Bin(_, a, b) => sub(a) || sub(b),
            ExprKind::IfX(c, a, b) => sub(c) || sub(a) || sub(b),
            ExprKind::Call(_, _, args) => args.iter().any(sub),
            _ => false,
        }
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Let(l, _, init) => {
                let t = self.t.locals[*l].cl();
                let n = self.loc[*l].clone();
                match init {
                    Some(e) => {
                        let v = self.at(e, 13)?;
                        self.line(&format!("{t} {n} = {v};"));
                    }
                    None => self.line(&format!("{t} {n};")),
                }
            }
            Stmt::Set(p, e) => {
                let (p, v) = (self.place(p)?, self.at(e, 13)?);
                self.line(&format!("{p} = {v};"));
            }
            Stmt::OpSet(op, p, e) => {
                let pt = match p {
                    Place::Local(l) => self.t.locals[*l],
                    Place::Index(..) => self.ty(e),
                };
                let (ps, v) = (self.place(p)?, self.at(e, 13)?);
                if is_float_rem(*op, pt) {
                    self.line(&format!("{ps} = fmod({ps}, {v});"));
                } else {
                    self.line(&format!("{ps} {}= {v};", op.c()));
                }
            }
            Stmt::Red(k, op, e) => {
                let v = self.at(e, 13)?;
                self.line(&format!("{} {}= {v};", self.red[*k], op.c()));
            }
            Stmt::Comb(k, e) => {
                let v = self.at(e, 13)?;
                self.line(&format!("{}_combine({v});", self.red[*k]));
            }
            Stmt::Comb2(k, v, j) => {
                let (v, j) = (self.at(v, 13)?, self.at(j, 13)?);
                self.line(&format!("{}_combine({v}, {j});", self.red[*k]));
            }
            Stmt::SpanRed(k, ix, op, e) => {
                let (ix, v) = (self.at(ix, 13)?, self.at(e, 13)?);
                self.line(&format!("{}[{ix}] {}= {v};", self.red[*k], op.c()));
            }
            Stmt::SpanComb(k, ix, e) => {
                let (ix, v) = (self.at(ix, 13)?, self.at(e, 13)?);
                self.line(&format!("{}_combine({ix}, {v});", self.red[*k]));
            }
            Stmt::If(c, a, b) => self.if_stmt(c, a, b.as_deref(), "")?,
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => self.for_loop(*var, start, end, *inclusive, step.as_ref(), body)?,
            Stmt::While(c, body) => {
                let c = self.at(c, 13)?;
                self.block(&format!("while ({c}) "), body)?;
                self.line("}");
            }
            Stmt::Loop(body) => {
                self.block("for (;;) ", body)?;
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Return => self.line("return;"),
            Stmt::Block(body) => {
                self.block("", body)?;
                self.line("}");
            }
        }
        Ok(())
    }

    fn if_stmt(&mut self, c: &Expr, a: &[Stmt], b: Option<&[Stmt]>, lead: &str) -> R<()> {
        let c = self.at(c, 13)?;
        self.block(&format!("{lead}if ({c}) "), a)?;
        match b {
            None => self.line("}"),
            Some([Stmt::If(c2, a2, b2)]) => self.if_stmt(c2, a2, b2.as_deref(), "} else ")?,
            Some(b) => {
                self.block("} else ", b)?;
                self.line("}");
            }
        }
        Ok(())
    }

    fn for_loop(
        &mut self,
        var: usize,
        start: &Expr,
        end: &Expr,
        inclusive: bool,
        step: Option<&Expr>,
        body: &[Stmt],
    ) -> R<()> {
        let t = self.t.locals[var].cl();
        let k = self.loc[var].clone();
        let s = self.at(start, 13)?;
        // Rust evaluates the end once; C every iteration: a bound that reads a `mut` local is
        // copied first.
        let hoist = self.reads_mutable(end);
        let e = if hoist {
            let e_name = self.names.give(&format!("{k}_end"));
            let v = self.at(end, 13)?;
            self.line("{");
            self.depth += 1;
            self.line(&format!("const {t} {e_name} = {v};"));
            e_name
        } else {
            self.at(end, 6)?
        };
        let cmp = if inclusive { "<=" } else { "<" };
        let inc = match step {
            Some(st) => format!("{k} += {}", self.at(st, 13)?),
            None => format!("++{k}"),
        };
        self.block(&format!("for ({t} {k} = {s}; {k} {cmp} {e}; {inc}) "), body)?;
        self.line("}");
        if hoist {
            self.depth -= 1;
            self.line("}");
        }
        Ok(())
    }

    /// The build-time checks: each reducer is the kind and type the closure was type-checked
    /// with, and an nd-item closure runs in the nd_range form. A failing check stops the build
    /// with an `#error` whose message is one identifier-like token: the launch scans the body
    /// for the reducers' names (shorthand checks, span rewriting), and a message with words in
    /// it could contain one.
    fn guards(&mut self, reds: &[(RedKind, Ty)]) {
        let mut defined = Vec::new();
        let mut checks = Vec::new();
        for (k, (kind, t)) in reds.iter().enumerate() {
            if !defined.contains(t) {
                defined.push(*t);
            }
            let (cond, what) = match kind {
                RedKind::Plain => (
                    format!("R{k}_SPAN != 0 || R{k}_SHAPE == CLR_SHAPE_PAIR"),
                    "plain",
                ),
                RedKind::Arg => (format!("R{k}_SHAPE != CLR_SHAPE_PAIR"), "argmin_or_argmax"),
                RedKind::Span => (format!("R{k}_SPAN == 0"), "span"),
            };
            checks.push(format!(
                "#if clr_kty(R{k}_T) != {code} || {cond}\n#error kernel_closure_reducer_{k}_needs_a_{what}_reduction_of_{ty}\n#endif",
                code = type_code(*t),
                ty = t.name(),
            ));
        }
        if !reds.is_empty() {
            self.out
                .push_str("#define clr_kty2(t) clr_kty_##t\n#define clr_kty(t) clr_kty2(t)\n");
            for t in defined {
                self.out
                    .push_str(&format!("#define clr_kty_{} {}\n", t.cl(), type_code(t)));
            }
        }
        for c in checks {
            self.out.push_str(&c);
            self.out.push('\n');
        }
        if self.ir.id == IdKind::Nd {
            self.out.push_str("#if CLR_FORM != CLR_FORM_ND\n#error kernel_closure_with_an_NdItem_needs_an_NdRange_launch\n#endif\n");
        }
    }
}

/// Emits the OpenCL C body of `ir` typed by `t`, for captures of types `caps` and reducers of
/// kinds and types `reds`.
pub fn emit(ir: &Ir, t: &Typing, caps: &[CapTy], reds: &[(RedKind, Ty)]) -> R<Emitted> {
    if caps.len() != ir.caps.len() || reds.len() != ir.reds.len() {
        return Err("the closure's captures or reducers do not match its IR".into());
    }
    let mut names = Names::default();
    let mut red = Vec::new();
    for (n, _) in &ir.reds {
        let c = names.give(n);
        names.reserve(&format!("{c}_combine"));
        red.push(c);
    }
    let cap = ir.caps.iter().map(|(n, _)| names.give(n)).collect();
    let loc = ir.locals.iter().map(|(n, _)| names.give(n)).collect();
    let mut em = Em {
        ir,
        t,
        names,
        red,
        cap,
        loc,
        out: String::new(),
        depth: 0,
    };
    em.guards(reds);
    em.stmts(&ir.body)?;
    Ok(Emitted {
        body: em.out,
        caps: em.cap,
        reds: em.red,
    })
}
