// No reduction op allows `-=`.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| *sum -= x[i]);
}

fn main() {}
