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
//!
//! Files: `ast.rs` (the tree and the tables of operators and functions), `lex.rs`, `parse.rs`,
//! `eval.rs` (type checks and evaluation per element type).

mod ast;
mod eval;
mod lex;
mod parse;
#[cfg(test)]
mod tests;

use crate::types::{ElemType, Value};
use ast::{column, Node};
use eval::{check, run};
use lex::{lex, Tok};
use parse::Parser;
/// A parsed combiner expression over `a` and `b`.
#[derive(Debug, Clone)]
pub struct Expr {
    src: String,
    root: Node,
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

    /// The expression as parsed.
    pub fn src(&self) -> &str {
        &self.src
    }

    /// Evaluates with OpenCL C semantics for `ty` (crate::types::ElemType: I32, U32, I64, U64
    /// integers wrap in their width; F32 rounds every operation to f32; F64 in f64).
    pub fn eval(&self, ty: ElemType, a: Value, b: Value) -> Result<Value, String> {
        if ty.is_storage() {
            return Err(format!(
                "combiner `{}`: {ty} is a storage type; combiners run in i32, u32, i64, u64, f32 \
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
