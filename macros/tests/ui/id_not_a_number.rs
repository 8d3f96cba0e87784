// An Item is not a number: its linear id is `item.linear_id`.
use clreduce::{kernel, Buffer};

fn f(x: &Buffer<f32>) {
    let _k = kernel!(|item, sum| *sum += x[item.id[0]] + x[item]);
}

fn main() {}
