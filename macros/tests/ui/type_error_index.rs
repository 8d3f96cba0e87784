// Buffers are indexed by usize, as slices are.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>, j: u32) {
    let _k = kernel!(|_i, sum| *sum += x[j]);
}

fn main() {}
