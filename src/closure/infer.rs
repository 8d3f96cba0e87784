//! Type inference over the closure IR with Rust's rules for the subset: the operands of an
//! arithmetic, bit or comparison operator have one type; a shift's right operand is independent;
//! an unsuffixed integer literal takes the type the context gives it, else `i32`, and a float
//! literal likewise, else `f64`; `let` takes its annotation or its initializer's type (or the
//! type of what is later assigned to it); `as` gives its target type and leaves its operand
//! alone; buffer indices are `usize`. Unification (union-find) over one type variable per
//! expression and per local, so information flows both ways, as in rustc: `let mut acc = 0.0;
//! ... *sum += acc` makes `acc` the reducer's type.

use super::ir::{BinOp, Expr, ExprKind, Ir, Place, Stmt, Ty, UnOp};

/// The run-time type of a capture: a scalar, or a buffer of an element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapTy {
    Scalar(Ty),
    Buffer(Ty),
}

/// The resolved types: one per expression slot and one per local.
#[derive(Debug, Clone)]
pub struct Typing {
    pub expr: Vec<Ty>,
    pub locals: Vec<Ty>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Info {
    Free,
    /// An unsuffixed integer literal (or anything unified with one).
    Int,
    /// An unsuffixed float literal.
    Float,
    Known(Ty),
}

fn merge(a: Info, b: Info) -> Result<Info, String> {
    use Info::*;
    let bad = || Err(format!("mismatched types {} and {}", show(a), show(b)));
    match (a, b) {
        (Free, x) | (x, Free) => Ok(x),
        (Int, Int) => Ok(Int),
        (Float, Float) => Ok(Float),
        (Known(t), Int) | (Int, Known(t)) if t.is_int() => Ok(Known(t)),
        (Known(t), Float) | (Float, Known(t)) if t.is_float() => Ok(Known(t)),
        (Known(s), Known(t)) if s == t => Ok(Known(t)),
        _ => bad(),
    }
}

fn show(i: Info) -> String {
    match i {
        Info::Free => "_".into(),
        Info::Int => "{integer}".into(),
        Info::Float => "{float}".into(),
        Info::Known(t) => t.name().into(),
    }
}

struct Uf<'a> {
    parent: Vec<usize>,
    info: Vec<Info>,
    ir: &'a Ir,
    caps: &'a [CapTy],
    reds: &'a [Ty],
}

/// How a math function types its arguments and result (receiver first).
enum Sig {
    /// Every argument has the receiver's type; so has the result.
    Same,
    /// `powi`: an `i32` exponent.
    IntExp,
    /// `rotate_left`: a `u32` count.
    U32Arg,
    /// `is_nan`, ...: a `bool`.
    Pred,
    /// `count_ones`, `leading_zeros`: a `u32`.
    CountU32,
}

fn sig(name: &str) -> Result<Sig, String> {
    Ok(match name {
        "powi" => Sig::IntExp,
        "rotate_left" => Sig::U32Arg,
        "is_nan" | "is_finite" | "is_infinite" => Sig::Pred,
        "count_ones" | "leading_zeros" => Sig::CountU32,
        n if super::ir::math_known(n) => Sig::Same,
        n => return Err(format!("unknown function {n}")),
    })
}

impl Uf<'_> {
    fn find(&mut self, a: usize) -> usize {
        let mut r = a;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut x = a;
        while self.parent[x] != r {
            let next = self.parent[x];
            self.parent[x] = r;
            x = next;
        }
        r
    }
    fn unify(&mut self, a: usize, b: usize) -> Result<(), String> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let m = merge(self.info[ra], self.info[rb])?;
        self.parent[rb] = ra;
        self.info[ra] = m;
        Ok(())
    }
    fn fix(&mut self, a: usize, t: Ty) -> Result<(), String> {
        let r = self.find(a);
        self.info[r] = merge(self.info[r], Info::Known(t))?;
        Ok(())
    }
    /// A literal: its suffix's type, or an integer / float variable.
    fn literal(&mut self, s: usize, suffix: Option<Ty>, var: Info) -> Result<(), String> {
        match suffix {
            Some(t) => self.fix(s, t),
            None => {
                let r = self.find(s);
                self.info[r] = merge(self.info[r], var)?;
                Ok(())
            }
        }
    }
    fn local(&self, l: usize) -> usize {
        self.ir.slots + l
    }
    fn cap(&self, c: usize) -> Result<CapTy, String> {
        self.caps
            .get(c)
            .copied()
            .ok_or_else(|| format!("capture {c} out of range"))
    }
    fn buffer_elem(&self, c: usize) -> Result<Ty, String> {
        match self.cap(c)? {
            CapTy::Buffer(t) => Ok(t),
            CapTy::Scalar(t) => Err(format!(
                "`{}` is a {} scalar, not a buffer",
                self.ir.caps[c].0,
                t.name()
            )),
        }
    }
    fn red(&self, k: usize) -> Result<Ty, String> {
        self.reds
            .get(k)
            .copied()
            .ok_or_else(|| format!("reducer {k} out of range"))
    }

    /// Constrains `e` and its operands; returns `e`'s slot.
    fn expr(&mut self, e: &Expr) -> Result<usize, String> {
        let s = e.slot;
        match &e.kind {
            ExprKind::Int(_, t) => self.literal(s, *t, Info::Int)?,
            ExprKind::Float(_, t) => self.literal(s, *t, Info::Float)?,
            ExprKind::Bool(_) => self.fix(s, Ty::Bool)?,
            ExprKind::Local(l) => {
                let l = self.local(*l);
                self.unify(s, l)?
            }
            ExprKind::Cap(c) => match self.cap(*c)? {
                CapTy::Scalar(t) => self.fix(s, t)?,
                CapTy::Buffer(_) => {
                    return Err(format!(
                        "`{}` is a buffer, used as a value",
                        self.ir.caps[*c].0
                    ))
                }
            },
            ExprKind::Id | ExprKind::ItemLinear => self.fix(s, Ty::Usize)?,
            ExprKind::Index(c, ix) => {
                let i = self.expr(ix)?;
                self.fix(i, Ty::Usize)?;
                let t = self.buffer_elem(*c)?;
                self.fix(s, t)?
            }
            ExprKind::ItemId(d) | ExprKind::ItemRange(d) => {
                let d = self.expr(d)?;
                self.fix(d, Ty::Usize)?;
                self.fix(s, Ty::Usize)?
            }
            ExprKind::Nd(_, d) => {
                if let Some(d) = d {
                    let d = self.expr(d)?;
                    self.fix(d, Ty::Usize)?;
                }
                self.fix(s, Ty::Usize)?
            }
            ExprKind::Un(UnOp::Neg | UnOp::Not, x) => {
                let x = self.expr(x)?;
                self.unify(s, x)?
            }
            ExprKind::Bin(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                if op.is_shift() {
                    self.unify(s, a)?
                } else if op.is_cmp() {
                    self.unify(a, b)?;
                    self.fix(s, Ty::Bool)?
                } else if op.is_logic() {
                    self.fix(a, Ty::Bool)?;
                    self.fix(b, Ty::Bool)?;
                    self.fix(s, Ty::Bool)?
                } else {
                    self.unify(a, b)?;
                    self.unify(s, a)?
                }
            }
            ExprKind::Cast(t, x) => {
                self.expr(x)?;
                self.fix(s, *t)?
            }
            ExprKind::Call(name, recv, args) => self.call(s, name, *recv, args)?,
            ExprKind::Const(t, name) => {
                let t = if name == "BITS" { Ty::U32 } else { *t };
                self.fix(s, t)?
            }
            ExprKind::IfX(c, a, b) => {
                let c = self.expr(c)?;
                self.fix(c, Ty::Bool)?;
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.unify(a, b)?;
                self.unify(s, a)?
            }
        }
        Ok(s)
    }

    fn call(
        &mut self,
        s: usize,
        name: &str,
        recv: Option<Ty>,
        args: &[Expr],
    ) -> Result<(), String> {
        let slots = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        let r = *slots.first().ok_or("a call without a receiver")?;
        if let Some(t) = recv {
            self.fix(r, t)?;
        }
        match sig(name)? {
            Sig::Same => {
                for &a in &slots[1..] {
                    self.unify(r, a)?;
                }
                self.unify(s, r)
            }
            Sig::IntExp | Sig::U32Arg => {
                let t = if matches!(sig(name)?, Sig::IntExp) {
                    Ty::I32
                } else {
                    Ty::U32
                };
                if let Some(&a) = slots.get(1) {
                    self.fix(a, t)?;
                }
                self.unify(s, r)
            }
            Sig::Pred => self.fix(s, Ty::Bool),
            Sig::CountU32 => self.fix(s, Ty::U32),
        }
    }

    fn place(&mut self, p: &Place) -> Result<usize, String> {
        match p {
            Place::Local(l) => Ok(self.local(*l)),
            Place::Index(c, ix) => {
                let i = self.expr(ix)?;
                self.fix(i, Ty::Usize)?;
                let t = self.buffer_elem(*c)?;
                // A slot for the element: the index expression's own slot is taken.
                let slot = self.parent.len();
                self.parent.push(slot);
                self.info.push(Info::Known(t));
                Ok(slot)
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), String> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), String> {
        match s {
            Stmt::Let(l, t, init) => {
                let ls = self.local(*l);
                if let Some(t) = t {
                    self.fix(ls, *t)?;
                }
                if let Some(e) = init {
                    let e = self.expr(e)?;
                    self.unify(ls, e)?;
                }
            }
            Stmt::Set(p, e) => {
                let p = self.place(p)?;
                let e = self.expr(e)?;
                self.unify(p, e)?;
            }
            Stmt::OpSet(op, p, e) => {
                let p = self.place(p)?;
                let e = self.expr(e)?;
                if !op.is_shift() {
                    self.unify(p, e)?;
                }
            }
            Stmt::Red(k, _, e) | Stmt::Comb(k, e) => {
                let t = self.red(*k)?;
                let e = self.expr(e)?;
                self.fix(e, t)?;
            }
            Stmt::Comb2(k, v, j) => {
                let t = self.red(*k)?;
                let v = self.expr(v)?;
                self.fix(v, t)?;
                let j = self.expr(j)?;
                self.fix(j, Ty::Usize)?;
            }
            Stmt::SpanRed(k, ix, _, e) | Stmt::SpanComb(k, ix, e) => {
                let t = self.red(*k)?;
                let ix = self.expr(ix)?;
                self.fix(ix, Ty::Usize)?;
                let e = self.expr(e)?;
                self.fix(e, t)?;
            }
            Stmt::If(c, a, b) => {
                let c = self.expr(c)?;
                self.fix(c, Ty::Bool)?;
                self.stmts(a)?;
                if let Some(b) = b {
                    self.stmts(b)?;
                }
            }
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                let (a, b) = (self.expr(start)?, self.expr(end)?);
                self.unify(a, b)?;
                let v = self.local(*var);
                self.unify(v, a)?;
                if let Some(st) = step {
                    let st = self.expr(st)?;
                    self.fix(st, Ty::Usize)?;
                }
                self.stmts(body)?;
            }
            Stmt::While(c, body) => {
                let c = self.expr(c)?;
                self.fix(c, Ty::Bool)?;
                self.stmts(body)?;
            }
            Stmt::Loop(body) | Stmt::Block(body) => self.stmts(body)?,
            Stmt::Break | Stmt::Continue | Stmt::Return => {}
        }
        Ok(())
    }

    fn resolve(&mut self, slot: usize) -> Option<Ty> {
        let r = self.find(slot);
        match self.info[r] {
            Info::Known(t) => Some(t),
            Info::Int => Some(Ty::I32),
            Info::Float => Some(Ty::F64),
            Info::Free => None,
        }
    }
}

/// Infers the type of every expression and local of `ir`, given the captures' and the
/// reducers' run-time types.
pub fn infer(ir: &Ir, caps: &[CapTy], reds: &[Ty]) -> Result<Typing, String> {
    let n = ir.slots + ir.locals.len();
    let mut uf = Uf {
        parent: (0..n).collect(),
        info: vec![Info::Free; n],
        ir,
        caps,
        reds,
    };
    uf.stmts(&ir.body)?;
    let expr = (0..ir.slots)
        .map(|s| {
            uf.resolve(s)
                .ok_or_else(|| format!("the type of expression {s} is unknown"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let locals = (0..ir.locals.len())
        .map(|l| {
            let slot = ir.slots + l;
            uf.resolve(slot)
                .ok_or_else(|| format!("the type of `{}` is unknown", ir.locals[l].0))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Typing { expr, locals })
}

/// Whether `op` applied to operands of type `t` is C's `%` on floats (emitted as `fmod`).
pub fn is_float_rem(op: BinOp, t: Ty) -> bool {
    op == BinOp::Rem && t.is_float()
}
