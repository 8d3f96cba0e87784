// `as u8`: only the element types, usize and bool are in the subset.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<u32>) {
    let _k = kernel!(|i, sum| *sum += (x[i] as u8) as u32);
}

fn main() {}
