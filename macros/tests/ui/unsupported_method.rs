// A method outside the subset: a compile error at the method, naming what is supported.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| *sum += x[i] / x.len() as f32);
}

fn main() {}
