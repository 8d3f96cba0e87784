//! The compile errors of `kernel!` (trybuild): syntax outside the subset, wrong reducer use,
//! type errors found by rustc in the host form, and captures of unsupported types. Each
//! `macros/tests/ui/*.rs` must fail to compile with exactly the message in its `.stderr` (rustc
//! version: see `rustc -V`; a new rustc may reword its own messages, then rerun with
//! `TRYBUILD=overwrite` and review the diff). trybuild checks them against clreduce without
//! its default features (this crate's dev-dependency), so the CLI's dependencies are not
//! compiled for it (decision 60).

#[test]
fn kernel_closure_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
