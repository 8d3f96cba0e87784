//! Helpers of the error tests (tests/errors.rs, tests/errors_input.rs): a fast queue, and a
//! launch that must fail and leave its result unchanged.
#![allow(dead_code)]

use super::common::*;
use clreduce::{reduction, Buffer, Error, Form, Kernel, Op, Options, Queue};

pub const START: i32 = 424_242;

/// A queue on a device that runs kernels quickly (not the simulator).
pub fn fast_queue() -> &'static Queue {
    queues()
        .iter()
        .find(|q| !q.device().is_simulator())
        .expect("a non-simulator device")
}

/// Launches `body` over `form` reducing into a fresh `[START]` result with `op`, then returns
/// the error (panicking if the launch succeeded) after checking the result is still START.
pub fn launch_err(
    q: &Queue,
    form: impl Into<Form>,
    op: Op,
    init_to_identity: bool,
    kernel: impl FnOnce(&Buffer<i32>) -> Kernel,
    options: Options,
) -> Error {
    let x = q.buffer_from(&vec![3i32; 4096]).unwrap();
    let res = q.buffer_from(&[START]).unwrap();
    let mut r = reduction(&res, op);
    if init_to_identity {
        r = r.initialize_to_identity();
    }
    let e = match q.parallel_for_reduce_with(form, r, kernel(&x), options) {
        Ok(ev) => {
            ev.wait().unwrap();
            panic!(
                "{}: launch succeeded with plan {:?}, result {}",
                short(q.device()),
                ev.plan().map(|p| p.summary()),
                res.get(0).unwrap()
            )
        }
        Err(e) => e,
    };
    assert_eq!(
        res.get(0).unwrap(),
        START,
        "{}: the result changed after {e}",
        short(q.device())
    );
    e
}

pub fn sum_body(x: &Buffer<i32>) -> Kernel {
    Kernel::new("sum += x[i];").arg("x", x)
}
