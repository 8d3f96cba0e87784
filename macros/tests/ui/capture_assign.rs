// Captured values are read-only in a kernel closure.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>, mut scale: f32) {
    let _k = kernel!(|i, sum| {
        scale = 2.0;
        *sum += x[i] * scale;
    });
}

fn main() {}
