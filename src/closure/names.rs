//! How Rust names become OpenCL C names in the generated body. A name is kept when it is a
//! valid C identifier that clashes with nothing: not a C or OpenCL C keyword or type, not a
//! built-in the emitter calls, not one of clreduce's own names (`i`, `n`, `item`, `combine`,
//! `clr_*`, `CLR_*`, `R<k>_*`, the reducers' `<name>_combine` macros), not an OpenCL macro and
//! not a name already given. Otherwise it gets a suffix (`n` becomes `n_1`) or, for names with
//! a reserved prefix or without a lower-case letter, a `v_` prefix. Every local gets its own
//! name, so Rust's shadowing (`let x = x + 1;`) becomes two C variables.

use std::collections::HashSet;

/// Names a closure's names never take: clreduce's own, C and OpenCL C keywords, types and
/// qualifiers, preprocessor words, and the built-ins the emitter calls.
#[rustfmt::skip]
const RESERVED: &[&str] = &[
    // clreduce's body names, and clr_main's locals and CLR_CALL's parameter: a kernel argument
    // of one of these names would be shadowed where kernels/reduce.cl passes the arguments on
    // (`CLR_CALL(i, u)` inside blocks that declare `start`, `end`, ...).
    "i", "n", "item", "combine", "u", "u_", "stride", "items", "chunk", "start", "end", "prev",
    // preprocessor words (the guards' lines are scanned for reducer names)
    "define", "undef", "error", "endif", "elif", "ifdef", "ifndef", "defined", "pragma",
    "include", "line",
    // C
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
    "true", "false", "bool", "NULL",
    // OpenCL C types and qualifiers
    "half", "uchar", "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t",
    "quad", "complex", "imaginary", "global", "local", "constant", "private", "generic",
    "kernel", "read_only", "write_only", "read_write", "uniform", "pipe", "image1d_t",
    "image2d_t", "image3d_t", "sampler_t", "event_t", "queue_t", "ndrange_t", "clk_event_t",
    "reserve_id_t", "cl_mem_fence_flags", "memory_scope", "memory_order", "printf", "barrier",
    "mem_fence", "read_mem_fence", "write_mem_fence",
    // built-ins the emitter calls
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "pow", "pown",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "floor", "ceil", "round", "trunc", "fabs", "abs", "fmin", "fmax", "min",
    "max", "clamp", "fma", "hypot", "copysign", "degrees", "radians", "isnan", "isfinite",
    "isinf", "popcount", "clz", "rotate", "fmod",
];

/// Prefixes of names that belong to OpenCL C or to clreduce's generated code.
const PREFIXES: &[&str] = &[
    "clr_",
    "CLR_",
    "cl_",
    "__",
    "get_",
    "convert_",
    "as_",
    "atomic_",
    "atom_",
    "vload",
    "vstore",
    "async_",
    "sub_group_",
    "work_group_",
    "native_",
    "half_",
];

fn is_vector_type(s: &str) -> bool {
    let base = s.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &s[base.len()..];
    matches!(digits, "2" | "3" | "4" | "8" | "16")
        && matches!(
            base,
            "char"
                | "uchar"
                | "short"
                | "ushort"
                | "int"
                | "uint"
                | "long"
                | "ulong"
                | "float"
                | "double"
                | "half"
                | "bool"
        )
}

/// `acc_0`, `lm_3`: clr_main's per-variable locals.
fn is_var_local(s: &str) -> bool {
    ["acc_", "lm_"].iter().any(|p| {
        s.strip_prefix(p)
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    })
}

/// `R0_T`, `R12_SPAN`, ...: clreduce's per-variable defines.
fn is_var_define(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('R') else {
        return false;
    };
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with('_')
}

/// Names handed out for one body.
#[derive(Default)]
pub struct Names {
    taken: HashSet<String>,
}

impl Names {
    /// Whether `s` may be used as it is.
    fn free(&self, s: &str) -> bool {
        let mut chars = s.chars();
        let ident = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        ident
            && s.chars().any(|c| c.is_ascii_lowercase())
            && !RESERVED.contains(&s)
            && !PREFIXES.iter().any(|p| s.starts_with(p))
            && !is_vector_type(s)
            && !is_var_define(s)
            && !is_var_local(s)
            && !self.taken.contains(s)
    }

    /// Reserves a name that is not the result of `give` (`i`, a reducer's `_combine`).
    pub fn reserve(&mut self, s: &str) {
        self.taken.insert(s.to_string());
    }

    /// The C name for the Rust name `rust`, reserved from now on.
    pub fn give(&mut self, rust: &str) -> String {
        let mut base: String = rust
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, 'v');
        }
        if !base.chars().any(|c| c.is_ascii_lowercase())
            || PREFIXES.iter().any(|p| base.starts_with(p))
            || is_var_define(&base)
        {
            base.insert_str(0, "v_");
        }
        let mut name = base.clone();
        let mut k = 1;
        while !self.free(&name) {
            name = format!("{base}_{k}");
            if is_var_local(&name) {
                // `acc_1` is clr_main's; `acc_v1` is not.
                name = format!("{base}_v{k}");
            }
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_are_kept_or_renamed() {
        let mut n = Names::default();
        assert_eq!(n.give("x"), "x");
        assert_eq!(n.give("x"), "x_1");
        assert_eq!(n.give("n"), "n_1");
        assert_eq!(n.give("float"), "float_1");
        assert_eq!(n.give("float4"), "float4_1");
        assert_eq!(n.give("PI"), "v_PI");
        assert_eq!(n.give("clr_x"), "v_clr_x");
        assert_eq!(n.give("R0_T"), "v_R0_T");
        assert_eq!(n.give("_"), "v__");
        assert_eq!(n.give("größe"), "gr__e");
        assert_eq!(n.give("u"), "u_1");
        assert_eq!(n.give("acc_0"), "acc_0_1");
        assert_eq!(n.give("acc"), "acc");
        assert_eq!(n.give("acc"), "acc_v1");
        assert_eq!(n.give("lm"), "lm");
        assert_eq!(n.give("lm"), "lm_v1");
        n.reserve("sum_combine");
        assert_eq!(n.give("sum_combine"), "sum_combine_1");
    }
}
