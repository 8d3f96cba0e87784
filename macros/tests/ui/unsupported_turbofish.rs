// Iterators and generic calls are not in the subset.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| *sum += x[i].max(1.0).sum::<f32>());
}

fn main() {}
