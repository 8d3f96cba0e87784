//! Lowers a closure body (syn) to the closure IR string that `clreduce::closure` parses, checking
//! that it stays inside the subset: anything else is a compile error at the offending span that
//! says what is supported. Also finds the captures (free variables) and how the body uses each
//! capture, reducer and the id. The grammar is in design/closures.md ("The IR").

use crate::table::{self, SUBSET};
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, Ident, Lit, Pat, Stmt, Type, UnOp};

/// How a capture is used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CapUse {
    Scalar,
    Read,
    Write,
}

/// How a reducer is used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RedUse {
    None,
    Plain,
    Arg,
    Span,
}

/// A captured variable: its first use (name and span) and how it is used.
pub struct Cap {
    pub ident: Ident,
    pub use_: CapUse,
}

/// What the first parameter is, from its uses.
#[derive(Default)]
pub struct IdUses {
    pub plain: Option<proc_macro2::Span>,
    pub item: Option<proc_macro2::Span>,
    pub nd: Option<proc_macro2::Span>,
}

#[derive(Clone, Copy)]
enum Bind {
    Local(usize),
    Id,
    Red(usize),
}

pub struct Lower {
    scopes: Vec<Vec<(String, Bind)>>,
    pub locals: Vec<(String, bool)>,
    pub caps: Vec<Cap>,
    pub reds: Vec<(String, RedUse)>,
    pub id: IdUses,
}

type R<T> = syn::Result<T>;

fn err<T>(at: impl Spanned, msg: impl std::fmt::Display) -> R<T> {
    Err(syn::Error::new(at.span(), msg.to_string()))
}

/// A construct outside the subset.
fn unsupported<T>(at: impl Spanned, what: &str) -> R<T> {
    err(
        at,
        format!("kernel!: {what} is not supported in a kernel closure; {SUBSET}"),
    )
}

/// The name of an identifier (`r#type` is `type`).
pub fn name(i: &Ident) -> String {
    let s = i.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

/// The single identifier of a path expression, if it is one.
fn path_ident(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident(),
        Expr::Paren(p) => path_ident(&p.expr),
        Expr::Group(g) => path_ident(&g.expr),
        _ => None,
    }
}

/// A type of the subset named by a path (`f32`, ...).
pub fn subset_type(t: &Type) -> Option<&'static str> {
    match t {
        Type::Path(p) if p.qself.is_none() => {
            let id = p.path.get_ident()?.to_string();
            table::TYPES.iter().copied().find(|t| *t == id)
        }
        Type::Paren(p) => subset_type(&p.elem),
        Type::Group(g) => subset_type(&g.elem),
        _ => None,
    }
}

fn bin_op(op: &BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Add(_) => "+",
        BinOp::Sub(_) => "-",
        BinOp::Mul(_) => "*",
        BinOp::Div(_) => "/",
        BinOp::Rem(_) => "%",
        BinOp::And(_) => "&&",
        BinOp::Or(_) => "||",
        BinOp::BitXor(_) => "^",
        BinOp::BitAnd(_) => "&",
        BinOp::BitOr(_) => "|",
        BinOp::Shl(_) => "<<",
        BinOp::Shr(_) => ">>",
        BinOp::Eq(_) => "==",
        BinOp::Lt(_) => "<",
        BinOp::Le(_) => "<=",
        BinOp::Ne(_) => "!=",
        BinOp::Ge(_) => ">=",
        BinOp::Gt(_) => ">",
        _ => return None,
    })
}

/// The operator of a compound assignment (`+=` gives `+`).
fn assign_op(op: &BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::AddAssign(_) => "+",
        BinOp::SubAssign(_) => "-",
        BinOp::MulAssign(_) => "*",
        BinOp::DivAssign(_) => "/",
        BinOp::RemAssign(_) => "%",
        BinOp::BitXorAssign(_) => "^",
        BinOp::BitAndAssign(_) => "&",
        BinOp::BitOrAssign(_) => "|",
        BinOp::ShlAssign(_) => "<<",
        BinOp::ShrAssign(_) => ">>",
        _ => return None,
    })
}

/// A branch that is only a value: `{ v }` (or an `else if` chain of them).
fn pure_block(b: &Block) -> Option<&Expr> {
    match b.stmts.as_slice() {
        [Stmt::Expr(e, None)] => Some(e),
        _ => None,
    }
}

fn literal(l: &Lit) -> R<String> {
    match l {
        Lit::Int(i) => {
            let suffix = i.suffix();
            let ty = match suffix {
                "" => "_",
                s => table::TYPES
                    .iter()
                    .copied()
                    .find(|t| *t == s && *t != "bool")
                    .map_or_else(|| err(l, format!("kernel!: an integer literal of type {s} is not supported; {SUBSET}")), Ok)?,
            };
            if ty == "f32" || ty == "f64" {
                return Ok(format!("(float {} {ty})", i.base10_digits()));
            }
            Ok(format!("(int {} {ty})", i.base10_digits()))
        }
        Lit::Float(f) => {
            let ty = match f.suffix() {
                "" => "_",
                "f32" => "f32",
                "f64" => "f64",
                s => {
                    return err(
                        l,
                        format!("kernel!: a float literal of type {s} is not supported"),
                    )
                }
            };
            Ok(format!("(float {} {ty})", f.base10_digits()))
        }
        Lit::Bool(b) => Ok(format!("(bool {})", b.value)),
        _ => unsupported(l, "this literal"),
    }
}

impl Lower {
    pub fn new(id: Option<String>, reds: &[String]) -> Lower {
        let mut scope = Vec::new();
        if let Some(id) = id {
            scope.push((id, Bind::Id));
        }
        for (k, r) in reds.iter().enumerate() {
            scope.push((r.clone(), Bind::Red(k)));
        }
        Lower {
            scopes: vec![scope],
            locals: Vec::new(),
            caps: Vec::new(),
            reds: reds.iter().map(|r| (r.clone(), RedUse::None)).collect(),
            id: IdUses::default(),
        }
    }

    fn lookup(&self, n: &str) -> Option<Bind> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(m, _)| m == n).map(|(_, b)| *b))
    }

    fn bind(&mut self, n: String, b: Bind) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((n, b));
        }
    }

    fn new_local(&mut self, n: String, mutable: bool) -> usize {
        self.locals.push((n, mutable));
        self.locals.len() - 1
    }

    fn capture(&mut self, i: &Ident, use_: CapUse) -> R<usize> {
        let n = name(i);
        if let Some(k) = self.caps.iter().position(|c| name(&c.ident) == n) {
            let old = self.caps[k].use_;
            let merged = match (old, use_) {
                (a, b) if a == b => a,
                (CapUse::Read, CapUse::Write) | (CapUse::Write, CapUse::Read) => CapUse::Write,
                _ => {
                    return err(
                        i,
                        format!("kernel!: `{n}` is used both as a buffer (indexed) and as a value"),
                    )
                }
            };
            self.caps[k].use_ = merged;
            return Ok(k);
        }
        self.caps.push(Cap {
            ident: i.clone(),
            use_,
        });
        Ok(self.caps.len() - 1)
    }

    fn use_red(&mut self, k: usize, u: RedUse, at: impl Spanned) -> R<()> {
        let (n, old) = self.reds[k].clone();
        if old != RedUse::None && old != u {
            let says = |u: RedUse| match u {
                RedUse::Plain => format!("`*{n} op= v` / `{n}.combine(v)`"),
                RedUse::Arg => format!("`{n}.combine(value, index)`"),
                RedUse::Span => format!("`{n}[k] op= v` / `{n}[k].combine(v)`"),
                RedUse::None => String::new(),
            };
            return err(
                at,
                format!(
                    "kernel!: reducer `{n}` is used as {} here but as {} elsewhere: one reducer is a plain, an argmin/argmax or a span reducer",
                    says(u),
                    says(old)
                ),
            );
        }
        self.reds[k].1 = u;
        Ok(())
    }

    fn write_only<T>(&self, k: usize, at: impl Spanned) -> R<T> {
        let n = &self.reds[k].0;
        err(
            at,
            format!("kernel!: reducer `{n}` is write-only: combine into it with `*{n} += v` (ops that allow it), `{n}.combine(v)`, `{n}.combine(value, index)` (argmin/argmax) or `{n}[k] += v` (spans)"),
        )
    }

    /// The closure body: a block, or one expression statement.
    pub fn body(&mut self, e: &Expr) -> R<String> {
        match e {
            Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            e => Ok(format!("(do {})", self.stmt_expr(e)?)),
        }
    }

    fn block(&mut self, b: &Block) -> R<String> {
        self.scopes.push(Vec::new());
        let mut out = String::from("(do");
        for s in &b.stmts {
            out.push(' ');
            out.push_str(&self.stmt(s)?);
        }
        self.scopes.pop();
        out.push(')');
        Ok(out)
    }

    fn stmt(&mut self, s: &Stmt) -> R<String> {
        match s {
            Stmt::Local(l) => self.local(l),
            Stmt::Expr(e, _) => self.stmt_expr(e),
            Stmt::Item(i) => unsupported(i, "an item (fn, use, const, struct ...)"),
            Stmt::Macro(m) => unsupported(m, "a macro call"),
        }
    }

    fn local(&mut self, l: &syn::Local) -> R<String> {
        let (ident, mutable, ty) = match &l.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                (&p.ident, p.mutability.is_some(), "_")
            }
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    let ty = subset_type(&t.ty).map_or_else(
                        || {
                            err(
                                &t.ty,
                                format!("kernel!: a `let` of this type is not supported; {SUBSET}"),
                            )
                        },
                        Ok,
                    )?;
                    (&p.ident, p.mutability.is_some(), ty)
                }
                p => return unsupported(p, "this pattern (only `let name` and `let mut name`)"),
            },
            p => return unsupported(p, "this pattern (only `let name` and `let mut name`)"),
        };
        let Some(init) = &l.init else {
            let k = self.new_local(name(ident), mutable);
            self.bind(name(ident), Bind::Local(k));
            return Ok(format!("(let {k} {ty} _)"));
        };
        if let Some((_, d)) = &init.diverge {
            return unsupported(d, "`let ... else`");
        }
        // `let v = if c { ...; a } else { ...; b };` with statements in the branches: declared,
        // then assigned in each branch (the new name is not in scope in its own initializer).
        if let Expr::If(i) = &*init.expr {
            if !self.is_pure_if(i) {
                let k = self.new_local(name(ident), mutable);
                let assign = self.if_assigning(i, k)?;
                self.bind(name(ident), Bind::Local(k));
                return Ok(format!("(let {k} {ty} _) {assign}"));
            }
        }
        let v = self.expr(&init.expr)?;
        let k = self.new_local(name(ident), mutable);
        self.bind(name(ident), Bind::Local(k));
        Ok(format!("(let {k} {ty} {v})"))
    }

    fn is_pure_if(&self, i: &syn::ExprIf) -> bool {
        let Some((_, els)) = &i.else_branch else {
            return false;
        };
        pure_block(&i.then_branch).is_some()
            && match &**els {
                Expr::Block(b) => pure_block(&b.block).is_some(),
                Expr::If(j) => self.is_pure_if(j),
                _ => false,
            }
    }

    /// `if` whose branches end in a value, as statements that assign it to local `k`.
    fn if_assigning(&mut self, i: &syn::ExprIf, k: usize) -> R<String> {
        let Some((_, els)) = &i.else_branch else {
            return err(i, "kernel!: an `if` used as a value needs an `else`");
        };
        let c = self.expr(&i.cond)?;
        let then = self.block_assigning(&i.then_branch, k)?;
        let els = match &**els {
            Expr::Block(b) => self.block_assigning(&b.block, k)?,
            Expr::If(j) => format!("(do {})", self.if_assigning(j, k)?),
            e => return unsupported(e, "this `else`"),
        };
        Ok(format!("(if {c} {then} {els})"))
    }

    fn block_assigning(&mut self, b: &Block, k: usize) -> R<String> {
        let Some((Stmt::Expr(tail, None), init)) = b.stmts.split_last() else {
            return err(
                b,
                "kernel!: this branch must end in a value (an expression without `;`)",
            );
        };
        self.scopes.push(Vec::new());
        let mut out = String::from("(do");
        for s in init {
            out.push(' ');
            out.push_str(&self.stmt(s)?);
        }
        let v = match tail {
            Expr::If(j) if !self.is_pure_if(j) => {
                let t = self.new_local(format!("{}_v", self.locals[k].0), true);
                format!(
                    "(let {t} _ _) {} (set (loc {k}) (loc {t}))",
                    self.if_assigning(j, t)?
                )
            }
            _ => format!("(set (loc {k}) {})", self.expr(tail)?),
        };
        self.scopes.pop();
        Ok(format!("{out} {v})"))
    }

    /// An expression in statement position.
    fn stmt_expr(&mut self, e: &Expr) -> R<String> {
        match e {
            Expr::Paren(p) => self.stmt_expr(&p.expr),
            Expr::Group(g) => self.stmt_expr(&g.expr),
            Expr::Assign(a) => self.assign(&a.left, None, &a.right, e),
            Expr::Binary(b) => match assign_op(&b.op) {
                Some(op) => self.assign(&b.left, Some(op), &b.right, e),
                None => err(e, "kernel!: this expression does nothing as a statement; a statement assigns, reduces (`*sum += v`, `sum.combine(v)`) or is `let`, `if`, `for`, `while`, `loop`, `break`, `continue` or `return`"),
            },
            Expr::MethodCall(m) => self.combine(m),
            Expr::If(i) => self.if_stmt(i),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::While(w) => {
                if let Some(l) = &w.label {
                    return unsupported(l, "a loop label");
                }
                if let Expr::Let(l) = &*w.cond {
                    return unsupported(l, "`while let`");
                }
                let c = self.expr(&w.cond)?;
                Ok(format!("(while {c} {})", self.block(&w.body)?))
            }
            Expr::Loop(l) => {
                if let Some(l) = &l.label {
                    return unsupported(l, "a loop label");
                }
                Ok(format!("(loop {})", self.block(&l.body)?))
            }
            Expr::Break(b) if b.label.is_none() && b.expr.is_none() => Ok("(break)".into()),
            Expr::Continue(c) if c.label.is_none() => Ok("(continue)".into()),
            Expr::Return(r) => match &r.expr {
                None => Ok("(return)".into()),
                Some(v) => match &**v {
                    Expr::Tuple(t) if t.elems.is_empty() => Ok("(return)".into()),
                    v => err(v, "kernel!: the body returns nothing; `return` takes no value"),
                },
            },
            Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            Expr::Tuple(t) if t.elems.is_empty() => Ok("(do)".into()),
            Expr::Break(b) => unsupported(b, "`break` with a label or a value"),
            Expr::Continue(c) => unsupported(c, "`continue` with a label"),
            e => unsupported(e, "this statement"),
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf) -> R<String> {
        if let Expr::Let(l) = &*i.cond {
            return unsupported(l, "`if let`");
        }
        let c = self.expr(&i.cond)?;
        let then = self.block(&i.then_branch)?;
        let els = match &i.else_branch {
            None => "_".to_string(),
            Some((_, e)) => match &**e {
                Expr::Block(b) => self.block(&b.block)?,
                Expr::If(j) => format!("(do {})", self.if_stmt(j)?),
                e => return unsupported(e, "this `else`"),
            },
        };
        Ok(format!("(if {c} {then} {els})"))
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> R<String> {
        if let Some(l) = &f.label {
            return unsupported(l, "a loop label");
        }
        let var = match &*f.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => {
                name(&p.ident)
            }
            Pat::Wild(_) => "_".to_string(),
            p => return unsupported(p, "this loop pattern (only `for k in a..b`)"),
        };
        let (range, step) = match &*f.expr {
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (&*m.receiver, Some(self.expr(&m.args[0])?))
            }
            e => (e, None),
        };
        let range = match range {
            Expr::Paren(p) => &*p.expr,
            e => e,
        };
        let Expr::Range(r) = range else {
            return unsupported(
                &f.expr,
                "a `for` over anything but an integer range (`a..b`, `a..=b`, `(a..b).step_by(s)`)",
            );
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return err(
                r,
                "kernel!: a `for` range needs both bounds (`a..b` or `a..=b`)",
            );
        };
        let s = self.expr(start)?;
        let e = self.expr(end)?;
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_)) as u8;
        let k = self.new_local(var.clone(), false);
        self.scopes.push(vec![(var, Bind::Local(k))]);
        let body = self.block(&f.body);
        self.scopes.pop();
        let step = step.unwrap_or_else(|| "_".into());
        Ok(format!("(for {k} {s} {e} {inclusive} {step} {})", body?))
    }

    /// `place = v` or `place op= v`.
    fn assign(&mut self, left: &Expr, op: Option<&str>, right: &Expr, whole: &Expr) -> R<String> {
        let target = match left {
            Expr::Paren(p) => &*p.expr,
            l => l,
        };
        // `*r op= v`: a reducer.
        if let Expr::Unary(u) = target {
            if let (UnOp::Deref(_), Some(i)) = (&u.op, path_ident(&u.expr)) {
                if let Some(Bind::Red(k)) = self.lookup(&name(i)) {
                    let Some(op) = op else {
                        return self.write_only(k, whole);
                    };
                    return self.reduce_op(k, op, right, whole, None);
                }
            }
            return unsupported(u, "a dereference (only `*reducer op= v`)");
        }
        if let Some(i) = path_ident(target) {
            return match self.lookup(&name(i)) {
                Some(Bind::Local(k)) => {
                    if let (None, Expr::If(c)) = (op, right) {
                        if !self.is_pure_if(c) {
                            return self.if_assigning(c, k);
                        }
                    }
                    let v = self.expr(right)?;
                    Ok(match op {
                        None => format!("(set (loc {k}) {v})"),
                        Some(op) => format!("(opset {op} (loc {k}) {v})"),
                    })
                }
                Some(Bind::Red(k)) => {
                    let n = &self.reds[k].0;
                    match op {
                        Some(o) => err(whole, format!("kernel!: write `*{n} {o}= v`: `{n}` is a reducer (`&mut`)")),
                        None => self.write_only(k, whole),
                    }
                }
                Some(Bind::Id) => err(i, "kernel!: the id is read-only"),
                None => err(i, format!("kernel!: the captured `{}` is read-only in a kernel closure: copy it into a `let mut` first", name(i))),
            };
        }
        if let Expr::Index(ix) = target {
            if let Some(i) = path_ident(&ix.expr) {
                match self.lookup(&name(i)) {
                    Some(Bind::Red(k)) => {
                        let Some(op) = op else {
                            return err(whole, format!("kernel!: span elements are combined, not assigned: `{}[k] += v` or `{}[k].combine(v)`", self.reds[k].0, self.reds[k].0));
                        };
                        return self.reduce_op(k, op, right, whole, Some(&ix.index));
                    }
                    None => {
                        let c = self.capture(i, CapUse::Write)?;
                        let idx = self.expr(&ix.index)?;
                        let v = self.expr(right)?;
                        return Ok(match op {
                            None => format!("(set (idx {c} {idx}) {v})"),
                            Some(op) => format!("(opset {op} (idx {c} {idx}) {v})"),
                        });
                    }
                    Some(_) => {
                        return err(
                            ix,
                            "kernel!: only captured buffers can be indexed and assigned",
                        )
                    }
                }
            }
        }
        unsupported(left, "assigning to this (assign to a `let mut` local or to a captured buffer element `y[k]`)")
    }

    fn reduce_op(
        &mut self,
        k: usize,
        op: &str,
        right: &Expr,
        whole: &Expr,
        span_index: Option<&Expr>,
    ) -> R<String> {
        if !["+", "*", "&", "|", "^"].contains(&op) {
            let n = &self.reds[k].0;
            return err(whole, format!("kernel!: no reduction op allows `{op}=` on a reducer: use `{n}.combine(v)`, or `+=` (plus), `*=` (multiplies), `&=`, `|=`, `^=` (bitwise)"));
        }
        match span_index {
            None => {
                self.use_red(k, RedUse::Plain, whole)?;
                let v = self.expr(right)?;
                Ok(format!("(red {k} {op} {v})"))
            }
            Some(ix) => {
                self.use_red(k, RedUse::Span, whole)?;
                let ix = self.expr(ix)?;
                let v = self.expr(right)?;
                Ok(format!("(sred {k} {ix} {op} {v})"))
            }
        }
    }

    /// A method call as a statement: `r.combine(...)` or `r[k].combine(v)`.
    fn combine(&mut self, m: &syn::ExprMethodCall) -> R<String> {
        let red = match &*m.receiver {
            Expr::Index(ix) => path_ident(&ix.expr).and_then(|i| match self.lookup(&name(i)) {
                Some(Bind::Red(k)) => Some((k, Some(&*ix.index))),
                _ => None,
            }),
            r => path_ident(r).and_then(|i| match self.lookup(&name(i)) {
                Some(Bind::Red(k)) => Some((k, None)),
                _ => None,
            }),
        };
        let Some((k, span_index)) = red else {
            return err(m, "kernel!: this call does nothing as a statement; the statement calls are `r.combine(v)`, `r.combine(value, index)` and `r[k].combine(v)` on reducers");
        };
        let n = self.reds[k].0.clone();
        if m.method != "combine" || m.turbofish.is_some() {
            return err(&m.method, format!("kernel!: a reducer has one method, `combine`: `{n}.combine(v)`, `{n}.combine(value, index)` (argmin/argmax) or `{n}[k].combine(v)` (spans)"));
        }
        match (span_index, m.args.len()) {
            (None, 1) => {
                self.use_red(k, RedUse::Plain, m)?;
                Ok(format!("(comb {k} {})", self.expr(&m.args[0])?))
            }
            (None, 2) => {
                self.use_red(k, RedUse::Arg, m)?;
                let v = self.expr(&m.args[0])?;
                let j = self.expr(&m.args[1])?;
                Ok(format!("(comb2 {k} {v} {j})"))
            }
            (Some(ix), 1) => {
                self.use_red(k, RedUse::Span, m)?;
                let ix = self.expr(ix)?;
                Ok(format!("(scomb {k} {ix} {})", self.expr(&m.args[0])?))
            }
            _ => err(m, format!("kernel!: `combine` takes one value (`{n}.combine(v)`), or a value and its index for argmin/argmax (`{n}.combine(v, i)`)")),
        }
    }

    /// An expression in value position.
    pub fn expr(&mut self, e: &Expr) -> R<String> {
        match e {
            Expr::Lit(l) => literal(&l.lit),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Path(p) => self.path_value(p),
            Expr::Binary(b) => match bin_op(&b.op) {
                Some(op) => {
                    let l = self.expr(&b.left)?;
                    let r = self.expr(&b.right)?;
                    Ok(format!("(bin {op} {l} {r})"))
                }
                None => unsupported(e, "an assignment inside an expression"),
            },
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => Ok(format!("(un neg {})", self.expr(&u.expr)?)),
                UnOp::Not(_) => Ok(format!("(un not {})", self.expr(&u.expr)?)),
                _ => {
                    if let Some(Bind::Red(k)) = path_ident(&u.expr).and_then(|i| self.lookup(&name(i))) {
                        return self.write_only(k, e);
                    }
                    unsupported(u, "a dereference (only `*reducer op= v`)")
                }
            },
            Expr::Cast(c) => {
                let Some(t) = subset_type(&c.ty) else {
                    return err(&c.ty, format!("kernel!: `as` converts between i32, u32, i64, u64, usize, f32 and f64 (and from bool); {SUBSET}"));
                };
                Ok(format!("(cast {t} {})", self.expr(&c.expr)?))
            }
            Expr::Index(ix) => self.index_value(ix),
            Expr::Field(f) => self.field_value(f, None),
            Expr::MethodCall(m) => self.method_value(m),
            Expr::Call(c) => self.call_value(c),
            Expr::If(i) => self.if_value(i),
            Expr::Block(b) if b.label.is_none() => match pure_block(&b.block) {
                Some(v) => self.expr(v),
                None => unsupported(b, "a block with statements inside an expression (use `let v = if ...` or separate `let`s)"),
            },
            Expr::Macro(m) => unsupported(m, "a macro call"),
            Expr::Closure(c) => unsupported(c, "a closure inside a kernel closure"),
            Expr::Reference(r) => unsupported(r, "a reference (`&`)"),
            Expr::Range(r) => unsupported(r, "a range outside `for`"),
            Expr::Try(t) => unsupported(t, "`?`"),
            Expr::Match(m) => unsupported(m, "`match` (use `if` / `else if`)"),
            Expr::Tuple(t) => unsupported(t, "a tuple"),
            Expr::Array(a) => unsupported(a, "an array"),
            Expr::Struct(s) => unsupported(s, "a struct literal"),
            e => unsupported(e, "this expression"),
        }
    }

    fn path_value(&mut self, p: &syn::ExprPath) -> R<String> {
        if let Some(i) = p.path.get_ident().filter(|_| p.qself.is_none()) {
            return match self.lookup(&name(i)) {
                Some(Bind::Local(k)) => Ok(format!("(loc {k})")),
                Some(Bind::Id) => {
                    self.id.plain.get_or_insert(i.span());
                    Ok("(id)".into())
                }
                Some(Bind::Red(k)) => self.write_only(k, i),
                None => {
                    let c = self.capture(i, CapUse::Scalar)?;
                    Ok(format!("(cap {c})"))
                }
            };
        }
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
            return unsupported(p, "this path");
        }
        let tail = match segs.as_slice() {
            ["std" | "core", t, "consts", c] | [t, c] => Some((*t, *c)),
            _ => None,
        };
        if let Some((t, c)) = tail {
            if table::constant(t, c, segs.len() == 4) {
                return Ok(format!("(const {t} {c})"));
            }
        }
        err(p, format!("kernel!: unknown constant `{}`; the constants are `T::MAX`, `T::MIN` (integers and floats), `T::BITS`, `f32::INFINITY`, `NEG_INFINITY`, `NAN`, `EPSILON`, `MIN_POSITIVE` and `std::f32::consts::*` / `std::f64::consts::*`", segs.join("::")))
    }

    fn index_value(&mut self, ix: &syn::ExprIndex) -> R<String> {
        if let Expr::Field(f) = &*ix.expr {
            return self.field_value(f, Some(&ix.index));
        }
        let Some(i) = path_ident(&ix.expr) else {
            return unsupported(
                ix,
                "indexing this (only captured buffers are indexed: `x[k]`)",
            );
        };
        match self.lookup(&name(i)) {
            None => {
                let c = self.capture(i, CapUse::Read)?;
                Ok(format!("(idx {c} {})", self.expr(&ix.index)?))
            }
            Some(Bind::Red(k)) => self.write_only(k, ix),
            Some(_) => err(
                ix,
                "kernel!: only captured buffers can be indexed (`let` locals are scalars)",
            ),
        }
    }

    /// `item.linear_id`, `item.id[d]`, `item.range[d]`.
    fn field_value(&mut self, f: &syn::ExprField, index: Option<&Expr>) -> R<String> {
        let base = path_ident(&f.base).filter(|i| matches!(self.lookup(&name(i)), Some(Bind::Id)));
        let syn::Member::Named(field) = &f.member else {
            return unsupported(f, "a tuple field");
        };
        if base.is_none() {
            return unsupported(
                f,
                "a field access (only the item's `id[d]`, `range[d]` and `linear_id`)",
            );
        }
        self.id.item.get_or_insert(f.span());
        match (field.to_string().as_str(), index) {
            ("linear_id", None) => Ok("(item linear)".into()),
            (fld @ ("id" | "range"), Some(d)) => Ok(format!("(item {fld} {})", self.expr(d)?)),
            ("id" | "range", None) => err(
                f,
                "kernel!: index the item's arrays: `item.id[d]`, `item.range[d]`",
            ),
            _ => err(
                field,
                "kernel!: an item has `id[d]`, `range[d]` and `linear_id`",
            ),
        }
    }

    fn method_value(&mut self, m: &syn::ExprMethodCall) -> R<String> {
        if let Some(t) = &m.turbofish {
            return unsupported(t, "a turbofish");
        }
        let method = m.method.to_string();
        if let Some(i) = path_ident(&m.receiver) {
            match self.lookup(&name(i)) {
                Some(Bind::Red(k)) => {
                    let n = &self.reds[k].0;
                    return err(
                        m,
                        format!("kernel!: `{n}.combine(..)` is a statement, not a value"),
                    );
                }
                Some(Bind::Id) if table::nd_method(&method).is_some() => {
                    let arity = table::nd_method(&method).unwrap_or(0);
                    if m.args.len() != arity {
                        return err(m, format!("kernel!: `{method}` takes {arity} argument(s)"));
                    }
                    self.id.nd.get_or_insert(m.span());
                    return Ok(match m.args.first() {
                        Some(d) => format!("(nd {method} {})", self.expr(d)?),
                        None => format!("(nd {method})"),
                    });
                }
                _ => {}
            }
        }
        let Some(arity) = table::math_method(&method) else {
            return err(&m.method, format!("kernel!: method `{method}` is not supported in a kernel closure; the methods are {}", table::METHOD_LIST));
        };
        if m.args.len() != arity {
            return err(m, format!("kernel!: `{method}` takes {arity} argument(s)"));
        }
        let mut out = format!("(call {method} _ {}", self.expr(&m.receiver)?);
        for a in &m.args {
            out.push(' ');
            out.push_str(&self.expr(a)?);
        }
        out.push(')');
        Ok(out)
    }

    /// `f32::sqrt(x)`, `i32::max(a, b)`, `std::cmp::min(a, b)`.
    fn call_value(&mut self, c: &syn::ExprCall) -> R<String> {
        let Expr::Path(p) = &*c.func else {
            return unsupported(c, "this call");
        };
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let generic = p.path.segments.iter().any(|s| !s.arguments.is_none());
        let (ty, f) = match segs.as_slice() {
            _ if generic || p.qself.is_some() => return unsupported(c, "this call"),
            [t, f] if table::TYPES.contains(t) && *t != "bool" => (*t, *f),
            ["std" | "core", "cmp", f @ ("min" | "max")] | ["cmp", f @ ("min" | "max")] => ("_", *f),
            _ => return err(&c.func, format!("kernel!: `{}` is not a supported function; the functions are the methods' path forms (`f32::sqrt(x)`, `i32::max(a, b)`) and `std::cmp::min` / `max`: {}", segs.join("::"), table::METHOD_LIST)),
        };
        let Some(arity) = table::math_method(f) else {
            return err(
                &c.func,
                format!(
                    "kernel!: `{f}` is not supported; the methods are {}",
                    table::METHOD_LIST
                ),
            );
        };
        if c.args.len() != arity + 1 {
            return err(
                c,
                format!(
                    "kernel!: `{}` takes {} argument(s)",
                    segs.join("::"),
                    arity + 1
                ),
            );
        }
        let mut out = format!("(call {f} {ty}");
        for a in &c.args {
            out.push(' ');
            out.push_str(&self.expr(a)?);
        }
        out.push(')');
        Ok(out)
    }

    fn if_value(&mut self, i: &syn::ExprIf) -> R<String> {
        if let Expr::Let(l) = &*i.cond {
            return unsupported(l, "`if let`");
        }
        if !self.is_pure_if(i) {
            return err(i, "kernel!: an `if` inside an expression must be `if c { a } else { b }` with values only; for statements in the branches use `let v = if ...`");
        }
        let c = self.expr(&i.cond)?;
        let a = self.expr(pure_block(&i.then_branch).expect("checked pure"))?;
        let b = match i.else_branch.as_ref().map(|(_, e)| &**e) {
            Some(Expr::Block(b)) => self.expr(pure_block(&b.block).expect("checked pure"))?,
            Some(Expr::If(j)) => self.if_value(j)?,
            _ => return err(i, "kernel!: an `if` used as a value needs an `else`"),
        };
        Ok(format!("(ifx {c} {a} {b})"))
    }
}
