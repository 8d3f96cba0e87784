// `match` is not in the subset.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<i32>) {
    let _k = kernel!(|i, sum| {
        let v = match x[i] {
            0 => 1,
            _ => 2,
        };
        *sum += v;
    });
}

fn main() {}
