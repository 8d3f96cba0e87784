// A reducer the body never combines into has no type rustc could infer.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum, unused| *sum += x[i]);
}

fn main() {}
