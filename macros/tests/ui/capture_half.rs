// f16 is a storage type: a Buffer<Half> cannot be captured (use a string kernel and vload_half).
use clreduce::{kernel, Buffer, Half};

fn f(h: &Buffer<Half>, x: &Buffer<f32>) {
    let _k = kernel!(|i, sum| {
        let _unused = h[i];
        *sum += x[i];
    });
}

fn main() {}
