// One reducer is a plain, an argmin/argmax or a span reducer, not two of them.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|i, r| {
        r.combine(x[i]);
        r.combine(x[i], i);
    });
}

fn main() {}
