//! Reads of the 16-bit storage types in the user's body: `x[e]` on an f16 or bf16 buffer
//! becomes `clr_ld_f16(x, (e))` or `clr_ld_bf16(x, (e))` (kernels/common.cl), a `float` read
//! with core OpenCL's `vload_half` or a 16-bit shift, so that `sum += x[i]` works on every device
//! without `cl_khr_fp16` (issue 29). Other uses of the name (passing `x` to `vload_half` or
//! `vstore_half` by hand) are left alone; writing an element by subscript is an error.

use super::names::{expr_end, next_use};
use crate::error::{Error, Result};
use crate::types::ElemType;

/// The load macro of a storage type.
fn loader(ty: ElemType) -> Option<&'static str> {
    match ty {
        ElemType::F16 => Some("clr_ld_f16"),
        ElemType::BF16 => Some("clr_ld_bf16"),
        _ => None,
    }
}

/// Rewrites every subscripted read of the storage-type buffers among `params` (name, element
/// type). Line breaks are kept, so build-log lines still map to the body.
pub(crate) fn rewrite_loads(body: &str, params: &[(&str, ElemType)]) -> Result<String> {
    let mut out = body.to_string();
    for &(name, ty) in params {
        let Some(ld) = loader(ty) else { continue };
        let b = out.clone().into_bytes();
        let mut res = String::with_capacity(b.len() + 32);
        let (mut i, mut copied) = (0, 0);
        while let Some(at) = next_use(&b, i, name) {
            let mut k = at + name.len();
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k >= b.len() || b[k] != b'[' {
                i = at + name.len();
                continue;
            }
            let end = expr_end(&b, k + 1);
            if end >= b.len() || b[end] != b']' {
                return Err(bad(name, ty, "unbalanced subscript"));
            }
            let rest = out[end + 1..].trim_start();
            let pre = out[copied..at].trim_end();
            let assigns = (rest.starts_with('=') && !rest.starts_with("=="))
                || [
                    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--",
                ]
                .iter()
                .any(|o| rest.starts_with(o))
                || pre.ends_with("++")
                || pre.ends_with("--");
            if assigns {
                return Err(bad(
                    name,
                    ty,
                    "an element is written by subscript; a body reads f16 and bf16 elements as \
                     float and writes f16 with vstore_half(v, i, name)",
                ));
            }
            res.push_str(&out[copied..at]);
            // Loads inside the subscript too (`x[idx[x[i]]]`). A read at exactly `[i]` is
            // written one way, `ld(x, (i))`, which `preload` looks for.
            let index = rewrite_loads(&out[k + 1..end], params)?;
            let index = if index.trim() == "i" { "i" } else { &index };
            res.push_str(&format!("{ld}({name}, ({index}))"));
            i = end + 1;
            copied = i;
        }
        res.push_str(&out[copied..]);
        out = res;
    }
    Ok(out)
}

/// Whether `body` (as the user wrote it) reads buffer `name` at exactly `[i]`.
pub(crate) fn reads_at_i(body: &str, name: &str) -> bool {
    let b = body.as_bytes();
    let mut i = 0;
    while let Some(at) = next_use(b, i, name) {
        let mut k = at + name.len();
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if k < b.len() && b[k] == b'[' {
            let end = expr_end(b, k + 1);
            if end < b.len() && b[end] == b']' && body[k + 1..end].trim() == "i" {
                return true;
            }
        }
        i = at + name.len();
    }
    false
}

/// The name of the value `preload` puts in place of a read of `name` at `[i]`: a parameter
/// of the body, loaded by the caller (several consecutive elements at once in the vector step
/// of kernels/reduce.cl, `Plan::vec`).
pub(crate) fn preloaded_name(name: &str) -> String {
    format!("clr_pv_{name}")
}

/// Replaces the reads at exactly `[i]` of the read-only 16-bit buffers among `params` in a
/// body rewritten by [`rewrite_loads`] with their preloaded values, and with `wide` (the
/// segmented `item` plan's vector loads) those of the read-only buffers of the other types
/// too; returns the new body and the preloaded buffers' names and element types.
pub(crate) fn preload(
    body: &str,
    params: &[(&str, ElemType, bool)],
    wide: bool,
) -> (String, Vec<(String, ElemType)>) {
    let mut out = body.to_string();
    let mut loaded = Vec::new();
    for &(name, ty, writable) in params {
        if writable {
            continue;
        }
        match loader(ty) {
            Some(ld) => {
                let at_i = format!("{ld}({name}, (i))");
                if out.contains(&at_i) {
                    out = out.replace(&at_i, &preloaded_name(name));
                    loaded.push((name.to_string(), ty));
                }
            }
            None if wide => {
                if let Some(b) = replace_reads_at_i(&out, name) {
                    out = b;
                    loaded.push((name.to_string(), ty));
                }
            }
            None => {}
        }
    }
    (out, loaded)
}

/// `body` with every read of `name` at exactly `[i]` replaced by its preloaded value, or
/// `None` where there is none. An element whose address is taken (`&x[i]`) or a member of
/// the same name (`s.x[i]`, `p->x[i]`) is left alone.
fn replace_reads_at_i(body: &str, name: &str) -> Option<String> {
    let b = body.as_bytes();
    let (mut i, mut copied, mut res, mut any) = (0, 0, String::new(), false);
    while let Some(at) = next_use(b, i, name) {
        i = at + name.len();
        let mut k = i;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if k >= b.len() || b[k] != b'[' {
            continue;
        }
        let end = expr_end(b, k + 1);
        if end >= b.len() || b[end] != b']' || body[k + 1..end].trim() != "i" {
            continue;
        }
        let pre = body[..at].trim_end();
        let address = pre.ends_with('&') && !pre.ends_with("&&");
        if address || pre.ends_with('.') || pre.ends_with("->") {
            continue;
        }
        res.push_str(&body[copied..at]);
        res.push_str(&preloaded_name(name));
        copied = end + 1;
        i = copied;
        any = true;
    }
    any.then(|| {
        res.push_str(&body[copied..]);
        res
    })
}

/// The element type a preloaded read of a `ty` buffer gives the body (`float` for the 16-bit
/// storage types).
pub(crate) fn preloaded_type(ty: ElemType) -> &'static str {
    if ty.is_storage() {
        "float"
    } else {
        ty.cl_name()
    }
}

/// One element of preloaded buffer `name` at index expression `ci` (CLR_CALL).
pub(crate) fn load_one(name: &str, ty: ElemType, ci: &str) -> String {
    match loader(ty) {
        Some(ld) => format!("{ld}({name}, ({ci}))"),
        None => format!("{name}[({ci})]"),
    }
}

/// `w` consecutive elements of preloaded buffer `name` from index `vi` (a multiple of `w`) in
/// one aligned load (CLR_CALL_V), as a declaration of `clr_vx_NAME`.
pub(crate) fn load_vector(name: &str, ty: ElemType, w: usize, vi: &str) -> String {
    match loader(ty) {
        Some(ld) => format!(
            "const CLR_VF clr_vx_{name} = {}({name}, {vi});",
            ld.replace("clr_ld_", "clr_vld_")
        ),
        None => {
            let t = ty.cl_name();
            format!("const {t}{w} clr_vx_{name} = *((__global const {t}{w}*)({name} + ({vi})));")
        }
    }
}

fn bad(name: &str, ty: ElemType, problem: &str) -> Error {
    Error::BadArgument {
        name: name.to_string(),
        problem: format!("{ty} buffer: {problem}"),
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_loads;
    use crate::types::ElemType::{BF16, F16, F32};

    #[test]
    fn subscripted_reads_become_loads() {
        let p = [("x", F16), ("w", BF16), ("y", F32)];
        let got = rewrite_loads("sum += x[i] * w[ (i + 1) % n ] + y[i]; // x[i]\nz = x;", &p);
        assert_eq!(
            got.unwrap(),
            "sum += clr_ld_f16(x, (i)) * clr_ld_bf16(w, ( (i + 1) % n )) + y[i]; // x[i]\nz = x;"
        );
        let nested = rewrite_loads("sum += x[idx[w[i] > 0.5f]];", &p).unwrap();
        assert_eq!(
            nested,
            "sum += clr_ld_f16(x, (idx[clr_ld_bf16(w, (i)) > 0.5f]));"
        );
        assert!(rewrite_loads("if (x[i] == 1.0f) sum += 1;", &p).is_ok());
        for w in ["x[i] = 1.0f;", "x[i] += 2;", "x[i]++;", "++w[i];"] {
            assert!(rewrite_loads(w, &p).is_err(), "{w}");
        }
        assert!(rewrite_loads("sum += x[i;", &p).is_err());
    }

    #[test]
    fn reads_at_i_are_found_and_preloaded() {
        use super::{preload, reads_at_i};
        let body = "sum += x[ i ] * w[i + 1]; // y[i]\nlo_combine(y[(i)]);";
        assert!(reads_at_i(body, "x"));
        assert!(!reads_at_i(body, "w"));
        assert!(!reads_at_i(body, "y"), "a comment and (i) are not [i]");
        let p = [("x", F16), ("w", BF16), ("y", F16)];
        let rewritten = rewrite_loads(body, &p).unwrap();
        let params = [("x", F16, false), ("w", BF16, false), ("y", F16, false)];
        let (pre, loaded) = preload(&rewritten, &params, false);
        assert_eq!(
            pre,
            "sum += clr_pv_x * clr_ld_bf16(w, (i + 1)); // y[i]\nlo_combine(clr_ld_f16(y, ((i))));"
        );
        assert_eq!(loaded, vec![("x".to_string(), F16)]);
        // A writable buffer is never preloaded (the body may store into it by hand).
        let (same, none) = preload(&rewritten, &[("x", F16, true)], true);
        assert_eq!((same, none.len()), (rewritten, 0));
    }

    #[test]
    fn wide_preloads_take_every_read_only_type() {
        use super::preload;
        let body = "sum += x[ i ] * y[i + 1] + x[i]; // x[i]\nm_combine(&x[i] != 0 && x[i] > 0);";
        let params = [("x", F32, false), ("y", F32, false)];
        let (same, none) = preload(body, &params, false);
        assert_eq!((same.as_str(), none.len()), (body, 0));
        let (pre, loaded) = preload(body, &params, true);
        assert_eq!(
            pre,
            "sum += clr_pv_x * y[i + 1] + clr_pv_x; // x[i]\nm_combine(&x[i] != 0 && clr_pv_x > 0);"
        );
        assert_eq!(loaded, vec![("x".to_string(), F32)]);
    }
}
