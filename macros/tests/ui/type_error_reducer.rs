// The reducer's element type is fixed by the annotation: an f64 value does not combine into it.
use clreduce::closure::Reducer;
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f64>) {
    let _k = kernel!(|i, sum: &mut Reducer<f32>| sum.combine(x[i]));
}

fn main() {}
