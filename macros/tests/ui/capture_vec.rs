// A host Vec cannot be captured: only clreduce buffers and scalars.
use clreduce::kernel;

fn main() {
    let v = vec![1.0f32, 2.0];
    let _k = kernel!(|i, sum| *sum += v[i]);
}
