//! `kernel!`: clreduce kernel bodies written as Rust closures. The macro checks that the
//! closure stays inside the subset clreduce translates to OpenCL C (anything else is a compile
//! error at its span), records the body as a compact IR for the run-time side
//! (`clreduce::closure`), and emits the same closure as ordinary Rust over host views and host
//! reducers, so rustc type-checks it and it can run on the host. Use it through the re-export
//! `clreduce::kernel!`; the subset, the name mapping and the examples are in the docs of
//! `clreduce::closure` and in design/closures.md.

mod lower;
mod table;

use lower::{CapUse, Lower, RedUse};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprClosure, Ident, Pat, Type};

/// A clreduce kernel body as a Rust closure: `kernel!(|i, sum| *sum += x[i] * 2.0)`.
///
/// Use it as `clreduce::kernel!`. The value is a `clreduce::closure::Closure`: pass it (or a
/// reference to it) where a `Kernel` goes, ask it for its OpenCL C (`source()`), or run it on
/// the host (`run_on_host(&queue, range, reductions)`).
///
/// ```ignore
/// use clreduce::{kernel, reduction, Op, Range};
/// let k = kernel!(|i, sum| *sum += x[i] * 2.0);      // x: Buffer<f32>
/// queue.parallel_for_reduce(Range::new(n), reduction(&sum, Op::Plus), &k)?;
/// // k.source() ends in "sum += x[i] * 2.0f;"
/// ```
///
/// **Parameters.** The id first: `i` (a `usize`, the linear id), an `item` (`item.id[d]`,
/// `item.range[d]`, `item.linear_id`; ranges of any rank) or an nd-item (`it.global_id(d)`,
/// `local_id`, `group_id`, `global_range`, `local_range`, `group_range`, `global_linear_id()`,
/// `local_linear_id()`, `group_linear_id()`; nd_ranges only). The kind follows from the uses or
/// an annotation (`i: usize`, `item: Item`, `it: NdItem`). Then one reducer per reduction, in
/// order: `*sum += v` (and `*=`, `&=`, `|=`, `^=` where the op allows them) or
/// `sum.combine(v)` (`&mut Reducer<T>`), `best.combine(value, index)` (`&mut ArgReducer<T>`,
/// argmin/argmax), `hist[k] += v` or `hist[k].combine(v)` (`&mut SpanReducer<T>`, spans).
/// `T` is what rustc infers from the body, or an annotation (`sum: &mut Reducer<u32>`).
///
/// **Captures.** Every other free variable: a `clreduce::Buffer<T>` (`T`: i32, u32, i64, u64,
/// f32, f64), indexed with a `usize` (`x[k]`; assigned, `y[k] = v`, it is bound writable), or a
/// scalar of those types or `usize`. Captured values are read-only.
///
/// **The subset.** Literals; `+ - * / %` (`%` on floats is `fmod`), `== != < <= > >=`,
/// `& | ^ << >> !`, `&& ||`, unary `-`; `as` between i32, u32, i64, u64, usize, f32, f64 (and
/// from bool), with Rust's semantics; `let` and `let mut`, typed or inferred, `let v = if ..`;
/// assignment and compound assignment to locals and buffer elements; `if`/`else if`/`else`,
/// `if` as a value, `for k in a..b` / `a..=b` / `(a..b).step_by(s)`, `while`, `loop`, `break`,
/// `continue`, `return`; math methods on floats (`sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10
/// powf powi sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh floor ceil round
/// trunc abs min max clamp mul_add hypot recip to_degrees to_radians copysign is_nan is_finite
/// is_infinite`) and integers (`abs min max clamp count_ones leading_zeros rotate_left`), also
/// as paths (`f32::sqrt(x)`, `std::cmp::max(a, b)`), mapped to OpenCL's built-ins; the
/// constants `T::MAX`, `T::MIN`, `T::BITS`, `f32::INFINITY`, `NEG_INFINITY`, `NAN`, `EPSILON`,
/// `MIN_POSITIVE` and `std::f32::consts::*`, `std::f64::consts::*`.
///
/// Anything else is a compile error at its span that says what is supported, and so is a
/// reducer read, assigned or given an operator no op allows; rustc's own type errors point at
/// the closure's code. The `compile_fail` examples are doc tests of `clreduce::closure` (they
/// need clreduce, which this crate cannot depend on), the messages are checked by
/// `macros/tests/ui/*.rs` (trybuild), and design/closures.md explains the translation.
#[proc_macro]
pub fn kernel(input: TokenStream) -> TokenStream {
    let closure = syn::parse_macro_input!(input as ExprClosure);
    match expand(&closure) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

type R<T> = syn::Result<T>;

fn err<T>(at: impl Spanned, msg: impl std::fmt::Display) -> R<T> {
    err_at(at.span(), msg)
}

fn err_at<T>(at: proc_macro2::Span, msg: impl std::fmt::Display) -> R<T> {
    Err(syn::Error::new(at, msg.to_string()))
}

/// A closure parameter: its name (`None` for `_`) and annotation.
fn param(p: &Pat) -> R<(Option<Ident>, Option<&Type>)> {
    match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() && i.mutability.is_none() => {
            Ok((Some(i.ident.clone()), None))
        }
        Pat::Wild(_) => Ok((None, None)),
        Pat::Type(t) => {
            let (n, _) = param(&t.pat)?;
            Ok((n, Some(&t.ty)))
        }
        p => err(p, "kernel!: a parameter is a name (`i`, `sum`), optionally annotated (`sum: &mut Reducer<f32>`)"),
    }
}

/// The last path segment of a type, and the type's generic arguments.
fn last_segment(t: &Type) -> Option<&syn::PathSegment> {
    match t {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Paren(p) => last_segment(&p.elem),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

/// What the id is: "usize", "item" or "nd".
fn id_kind(annot: Option<&Type>, low: &Lower) -> R<&'static str> {
    let annotated = match annot {
        None => None,
        Some(t) => Some(
            match last_segment(t).map(|s| s.ident.to_string()).as_deref() {
                Some("usize") => "usize",
                Some("Item") => "item",
                Some("NdItem") => "nd",
                _ => return err(t, "kernel!: the id is a `usize`, an `Item` or an `NdItem`"),
            },
        ),
    };
    let derived =
        match (low.id.item, low.id.nd) {
            (Some(_), Some(at)) => return err_at(
                at,
                "kernel!: the id is used both as an `Item` (fields) and as an `NdItem` (methods)",
            ),
            (Some(_), None) => "item",
            (None, Some(_)) => "nd",
            (None, None) => "usize",
        };
    let kind = annotated.unwrap_or(derived);
    if kind != derived && derived != "usize" {
        let at = low
            .id
            .item
            .or(low.id.nd)
            .unwrap_or_else(proc_macro2::Span::call_site);
        return err_at(
            at,
            format!("kernel!: the id is annotated as {kind} but used as {derived}"),
        );
    }
    if kind != "usize" {
        if let Some(at) = low.id.plain {
            let hint = if kind == "item" {
                "item.linear_id"
            } else {
                "it.global_linear_id()"
            };
            return err_at(
                at,
                format!(
                    "kernel!: the id is an {} here, not a number: use `{hint}`",
                    if kind == "item" { "Item" } else { "NdItem" }
                ),
            );
        }
    }
    Ok(kind)
}

fn expand(c: &ExprClosure) -> R<Tokens> {
    if let Some(a) = c.asyncness {
        return err(a, "kernel!: an async closure is not a kernel");
    }
    if let Some(l) = &c.lifetimes {
        return err(l, "kernel!: `for<..>` is not supported");
    }
    if let syn::ReturnType::Type(_, t) = &c.output {
        if !matches!(&**t, Type::Tuple(tt) if tt.elems.is_empty()) {
            return err(t, "kernel!: a kernel closure returns nothing");
        }
    }
    let mut params = c.inputs.iter();
    let Some(first) = params.next() else {
        return err(
            c,
            "kernel!: the closure takes the id first (`|i, sum| ...`)",
        );
    };
    let (id_name, id_annot) = param(first)?;
    let mut reds: Vec<(Option<Ident>, Option<&Type>, proc_macro2::Span)> = Vec::new();
    for p in params {
        let (n, t) = param(p)?;
        reds.push((n, t, p.span()));
    }
    if reds.len() > 8 {
        return err(c, "kernel!: at most 8 reducers");
    }
    let red_names: Vec<String> = reds
        .iter()
        .enumerate()
        .map(|(k, (n, _, _))| n.as_ref().map_or_else(|| format!("_r{k}"), lower::name))
        .collect();
    let mut low = Lower::new(id_name.as_ref().map(lower::name), &red_names);
    let body_ir = low.body(&c.body)?;
    let kind = id_kind(id_annot, &low)?;

    // Reducer types: the annotation's, or the usage's with the element type left to rustc.
    let mut red_tys = Vec::new();
    for (k, (_, annot, at)) in reds.iter().enumerate() {
        let used = low.reds[k].1;
        let (kind_name, written) = match annot {
            Some(t) => {
                let inner = match t {
                    Type::Reference(r) if r.mutability.is_some() => &*r.elem,
                    t => return err(t, "kernel!: a reducer is `&mut Reducer<T>`, `&mut ArgReducer<T>` or `&mut SpanReducer<T>`"),
                };
                let seg = last_segment(inner).filter(|s| {
                    ["Reducer", "ArgReducer", "SpanReducer"].contains(&s.ident.to_string().as_str())
                });
                let Some(seg) = seg else {
                    return err(inner, "kernel!: a reducer is `&mut Reducer<T>`, `&mut ArgReducer<T>` or `&mut SpanReducer<T>`");
                };
                if !matches!(&seg.arguments, syn::PathArguments::AngleBracketed(a) if a.args.len() == 1)
                {
                    return err(seg, "kernel!: name the element type: `Reducer<f32>`");
                }
                let declared = match seg.ident.to_string().as_str() {
                    "Reducer" => RedUse::Plain,
                    "ArgReducer" => RedUse::Arg,
                    _ => RedUse::Span,
                };
                if used != RedUse::None && used != declared {
                    return err(
                        t,
                        format!(
                            "kernel!: reducer `{}` is declared {} but used as another kind",
                            red_names[k], seg.ident
                        ),
                    );
                }
                (seg.ident.to_string(), Some(quote!(#inner)))
            }
            None => {
                let n = match used {
                    RedUse::Plain => "Reducer",
                    RedUse::Arg => "ArgReducer",
                    RedUse::Span => "SpanReducer",
                    RedUse::None => {
                        return err_at(*at, format!("kernel!: reducer `{}` is never combined into, so its type is unknown: annotate it (`{}: &mut Reducer<f32>`)", red_names[k], red_names[k]))
                    }
                };
                (n.to_string(), None)
            }
        };
        // An annotation is used as written (its `use` stays used); otherwise the full path.
        red_tys.push(written.unwrap_or_else(|| {
            let kind_ident = Ident::new(&kind_name, proc_macro2::Span::call_site());
            quote!(::clreduce::closure::#kind_ident<_>)
        }));
    }

    let ir = write_ir(kind, &red_names, &low, &body_ir);
    Ok(assemble(
        c, kind, id_annot, id_name, &reds, &red_tys, &low, &ir,
    ))
}

/// The IR string: the header (id, reducers, captures, locals) and the body.
fn write_ir(kind: &str, red_names: &[String], low: &Lower, body: &str) -> String {
    let mut ir = format!("(closure (id {kind}) (reds");
    for (k, n) in red_names.iter().enumerate() {
        let u = match low.reds[k].1 {
            RedUse::None => "none",
            RedUse::Plain => "plain",
            RedUse::Arg => "arg",
            RedUse::Span => "span",
        };
        ir.push_str(&format!(" ({n} {u})"));
    }
    ir.push_str(") (caps");
    for c in &low.caps {
        let u = match c.use_ {
            CapUse::Scalar => "scalar",
            CapUse::Read => "read",
            CapUse::Write => "write",
        };
        ir.push_str(&format!(" ({} {u})", lower::name(&c.ident)));
    }
    ir.push_str(") (locals");
    for (n, m) in &low.locals {
        ir.push_str(&format!(" ({n} {})", *m as u8));
    }
    ir.push_str(&format!(") {body})"));
    ir
}

/// The expansion: a site static with the IR, the capture descriptions, and the host form.
#[allow(clippy::too_many_arguments)]
fn assemble(
    c: &ExprClosure,
    kind: &str,
    id_annot: Option<&Type>,
    id_name: Option<Ident>,
    reds: &[(Option<Ident>, Option<&Type>, proc_macro2::Span)],
    red_tys: &[Tokens],
    low: &Lower,
    ir: &str,
) -> Tokens {
    let id_ty = match (id_annot, kind) {
        (Some(t), _) => quote!(#t),
        (None, "item") => quote!(::clreduce::closure::Item),
        (None, "nd") => quote!(::clreduce::closure::NdItem),
        _ => quote!(usize),
    };
    let id_pat = match &id_name {
        Some(i) => quote!(#i),
        None => quote!(_),
    };
    let red_params = reds.iter().zip(red_tys).map(|((n, _, _), t)| match n {
        Some(i) => quote!(#i: &mut #t),
        None => quote!(_: &mut #t),
    });
    let cap_refs: Vec<Ident> = (0..low.caps.len())
        .map(|k| Ident::new(&format!("__clr_c{k}"), proc_macro2::Span::call_site()))
        .collect();
    let binds = low.caps.iter().zip(&cap_refs).map(|(cap, r)| {
        let i = &cap.ident;
        quote_spanned!(i.span()=> let #r = &#i;)
    });
    let describes = low.caps.iter().zip(&cap_refs).map(
        |(cap, r)| quote_spanned!(cap.ident.span()=> ::clreduce::__private::Capture::describe(#r)),
    );
    let host_lets = low.caps.iter().zip(&cap_refs).enumerate().map(|(k, (cap, r))| {
        let i = &cap.ident;
        let writable = cap.use_ == CapUse::Write;
        let m = if writable { quote!(mut) } else { quote!() };
        quote_spanned!(i.span()=> let #m #i = ::clreduce::__private::Capture::host(#r, __clr_env, #k, #writable)?;)
    });
    let body: &Expr = &c.body;
    let ir = syn::LitStr::new(ir, proc_macro2::Span::call_site());
    quote! {{
        static __CLR_SITE: ::clreduce::__private::Site = ::clreduce::__private::Site::new(#ir);
        #(#binds)*
        ::clreduce::closure::Closure::<_, _, (#id_ty, #(#red_tys,)*)>::new(
            &__CLR_SITE,
            ::std::vec![#(#describes),*],
            move |__clr_env: &::clreduce::__private::HostEnv| -> ::clreduce::Result<_> {
                #(#host_lets)*
                ::std::result::Result::Ok(move |#id_pat: #id_ty, #(#red_params),*| #body)
            },
        )
    }}
}
