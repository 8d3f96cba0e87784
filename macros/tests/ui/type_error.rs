// rustc type-checks the closure: f32 times an integer literal is a type error at this line.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| *sum += x[i] * 2);
}

fn main() {}
