//! The compile errors of `kernel!` (trybuild): syntax outside the subset, wrong reducer use,
//! type errors found by rustc in the host form, and captures of unsupported types. Each
//! `tests/ui/*.rs` must fail to compile with exactly the message in its `.stderr` (rustc
//! version: see `rustc -V`; a new rustc may reword its own messages, then rerun with
//! `TRYBUILD=overwrite` and review the diff).

#[test]
fn kernel_closure_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
