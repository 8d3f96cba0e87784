// A reducer is write-only: reading it is an error.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| {
        let s = *sum;
        *sum += x[i] + s;
    });
}

fn main() {}
