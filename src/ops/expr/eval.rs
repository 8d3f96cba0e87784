//! Evaluation with OpenCL C semantics per element type, and the type checks the device
//! compiler would make.

use super::ast::*;
use crate::types::ElemType;

// ---------------------------------------------------------------------------------------------
// Evaluation

/// An evaluation error: byte offset and message.
pub(super) type EResult<T> = Result<T, (usize, String)>;

/// An element type the combiner can run in.
pub(super) trait Scalar: Copy + PartialOrd {
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

pub(super) fn run<T: Scalar>(n: &Node, a: T, b: T) -> EResult<T> {
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
pub(super) fn check(n: &Node, ty: ElemType) -> EResult<()> {
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
