//! What the subset allows, as the macro checks it: the types, the math methods with their
//! arities, the nd-item methods and the constants. The run-time side (src/closure/emit.rs)
//! holds the same names with their OpenCL C mapping; design/closures.md lists both.

/// The types of the subset (`as` targets, `let` annotations, literal suffixes).
pub const TYPES: [&str; 8] = ["i32", "u32", "i64", "u64", "usize", "f32", "f64", "bool"];

/// The end of every "not supported" message.
pub const SUBSET: &str = "the subset is: literals, arithmetic, comparison, bit and logical operators, `as` casts between i32/u32/i64/u64/usize/f32/f64, `let` (typed or inferred), `if`/`else`, `for` over integer ranges, `while`, `loop`, `break`, `continue`, `return`, indexing captured buffers, math methods (`x.sqrt()`, `a.min(b)`, `f32::exp(x)`, ...) and reducer combines (see the docs of `clreduce::kernel!`); use `Kernel::new(\"OpenCL C\")` for anything else";

/// Math methods and the number of arguments besides the receiver.
const METHODS: &[(&str, usize)] = &[
    ("sqrt", 0),
    ("cbrt", 0),
    ("exp", 0),
    ("exp2", 0),
    ("exp_m1", 0),
    ("ln", 0),
    ("ln_1p", 0),
    ("log2", 0),
    ("log10", 0),
    ("powf", 1),
    ("powi", 1),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("asin", 0),
    ("acos", 0),
    ("atan", 0),
    ("atan2", 1),
    ("sinh", 0),
    ("cosh", 0),
    ("tanh", 0),
    ("asinh", 0),
    ("acosh", 0),
    ("atanh", 0),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("trunc", 0),
    ("abs", 0),
    ("min", 1),
    ("max", 1),
    ("clamp", 2),
    ("mul_add", 2),
    ("hypot", 1),
    ("recip", 0),
    ("to_degrees", 0),
    ("to_radians", 0),
    ("copysign", 1),
    ("is_nan", 0),
    ("is_finite", 0),
    ("is_infinite", 0),
    ("count_ones", 0),
    ("leading_zeros", 0),
    ("rotate_left", 1),
];

/// The list for messages.
pub const METHOD_LIST: &str = "sqrt, cbrt, exp, exp2, exp_m1, ln, ln_1p, log2, log10, powf, powi, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh, floor, ceil, round, trunc, abs, min, max, clamp, mul_add, hypot, recip, to_degrees, to_radians, copysign, is_nan, is_finite, is_infinite (floats); abs, min, max, clamp, count_ones, leading_zeros, rotate_left (integers)";

pub fn math_method(name: &str) -> Option<usize> {
    METHODS.iter().find(|(m, _)| *m == name).map(|(_, a)| *a)
}

/// The nd-item methods and their arities.
pub fn nd_method(name: &str) -> Option<usize> {
    Some(match name {
        "global_id" | "local_id" | "group_id" | "global_range" | "local_range" | "group_range" => 1,
        "global_linear_id" | "local_linear_id" | "group_linear_id" => 0,
        _ => return None,
    })
}

/// Whether `ty::name` (or `std::ty::consts::name` when `consts`) is a supported constant.
pub fn constant(ty: &str, name: &str, consts: bool) -> bool {
    let float = ty == "f32" || ty == "f64";
    let int = matches!(ty, "i32" | "u32" | "i64" | "u64" | "usize");
    if consts {
        return float
            && matches!(
                name,
                "PI" | "TAU"
                    | "E"
                    | "SQRT_2"
                    | "LN_2"
                    | "LN_10"
                    | "LOG2_E"
                    | "LOG10_E"
                    | "LOG2_10"
                    | "LOG10_2"
                    | "FRAC_PI_2"
                    | "FRAC_PI_3"
                    | "FRAC_PI_4"
                    | "FRAC_PI_6"
                    | "FRAC_PI_8"
                    | "FRAC_1_PI"
                    | "FRAC_2_PI"
                    | "FRAC_2_SQRT_PI"
                    | "FRAC_1_SQRT_2"
            );
    }
    (int && matches!(name, "MAX" | "MIN" | "BITS"))
        || (float
            && matches!(
                name,
                "MAX" | "MIN" | "INFINITY" | "NEG_INFINITY" | "NAN" | "EPSILON" | "MIN_POSITIVE"
            ))
}
