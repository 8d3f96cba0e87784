//! What a closure meets at run time when the launch does not fit it: the device launch fails
//! with a typed error and leaves the results as they were, and the host form returns the
//! matching typed error. A reducer whose type or kind differs from its reduction's, an
//! `NdItem` closure over a range, a shorthand the op does not allow, the wrong number of
//! reductions, and indices out of range (host form only: on the device they are undefined).

use super::*;

fn bad<T>(what: &str, r: clreduce::Result<T>, ok: impl Fn(&Error) -> bool) -> Result<(), String> {
    match r {
        Ok(_) => Err(format!("{what}: accepted")),
        Err(e) if ok(&e) => Ok(()),
        Err(e) => Err(format!("{what}: unexpected error {e}")),
    }
}

fn build_says(e: &Error, token: &str) -> bool {
    matches!(e, Error::BodyBuild { log, .. } if log.contains(token))
}

/// `k` launched with `red` must fail as `device` says and leave `res` at `start`; its host form
/// must fail as `host` says.
fn refused<F, B, A>(
    q: &Queue,
    form: Form,
    red: Reduction,
    k: &Closure<'_, F, B, A>,
    device: &dyn Fn(&Error) -> bool,
    host: &dyn Fn(&Error) -> bool,
    unchanged: &dyn Fn() -> clreduce::Result<bool>,
) -> Outcome
where
    F: Fn(&HostEnv) -> clreduce::Result<B>,
    B: HostBody<A>,
    A: Args,
{
    let r = bad(
        "device",
        q.parallel_for_reduce_with(form, red.clone(), k, Options::default()),
        device,
    )
    .and_then(|()| bad("host form", k.run_on_host(q, form, red), host));
    match (r, unchanged()) {
        (Err(m), _) => Outcome::Fail(m),
        (Ok(()), Ok(true)) => Outcome::Pass,
        (Ok(()), Ok(false)) => Outcome::Fail("the refused launch changed the result".into()),
        (Ok(()), Err(e)) => Outcome::Fail(format!("reading the result: {e}")),
    }
}

pub fn all(q: &Queue) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    let n = 1000usize;
    let form = Form::Range(Range::new(n as u64));
    let data: Vec<f32> = (0..n).map(|j| (j % 13) as f32).collect();
    let (x, s64, s32, v) = match (|| {
        Ok::<_, Error>((
            q.buffer_from(&data)?,
            q.buffer_from(&[2.5f64])?,
            q.buffer_from(&[2.5f32])?,
            q.buffer_from(&[0.0f32])?,
        ))
    })() {
        Ok(b) => b,
        Err(e) => return vec![("buffers".into(), Outcome::Fail(e.to_string()))],
    };
    let same64 = || Ok(s64.get(0)? == 2.5);
    let same32 = || Ok(s32.get(0)? == 2.5);

    let k = kernel!(|i, sum| *sum += x[i]);
    out.push((
        "an f32 reducer with an f64 reduction".into(),
        refused(
            q,
            form,
            reduction(&s64, Op::Plus),
            &k,
            &|e| build_says(e, "kernel_closure_reducer_0_needs_a_plain_reduction_of_f32"),
            &|e| {
                matches!(
                    e,
                    Error::TypeMismatch {
                        expected: ElemType::F64,
                        found: ElemType::F32,
                        ..
                    }
                )
            },
            &same64,
        ),
    ));
    let k = kernel!(|i, best| best.combine(x[i], i));
    out.push((
        "an argmin reducer with a plain reduction".into(),
        refused(q, form, reduction(&s32, Op::Minimum), &k,
            &|e| build_says(e, "kernel_closure_reducer_0_needs_a_argmin_or_argmax_reduction_of_f32"),
            &|e| matches!(e, Error::BadArgument { problem, .. } if problem.contains("argmin/argmax reducer")),
            &same32),
    ));
    let k = kernel!(|i, hist| hist[i % 4] += x[i]);
    out.push((
        "a span reducer with a plain reduction".into(),
        refused(q, form, reduction(&s32, Op::Plus), &k,
            &|e| build_says(e, "kernel_closure_reducer_0_needs_a_span_reduction_of_f32"),
            &|e| matches!(e, Error::BadArgument { problem, .. } if problem.contains("span reducer")),
            &same32),
    ));
    let k = kernel!(|it, sum| *sum += x[it.local_id(0)]);
    out.push((
        "an NdItem closure over a range".into(),
        refused(
            q,
            form,
            reduction(&s32, Op::Plus),
            &k,
            &|e| build_says(e, "kernel_closure_with_an_NdItem_needs_an_NdRange_launch"),
            &|e| matches!(e, Error::InvalidRange { .. }),
            &same32,
        ),
    ));
    let k = kernel!(|i, lo| *lo += x[i]);
    out.push((
        "`+=` on a minimum".into(),
        refused(
            q,
            form,
            reduction(&s32, Op::Minimum),
            &k,
            &|e| matches!(e, Error::ReducerOperator { operator, .. } if operator == "+="),
            &|e| matches!(e, Error::ReducerOperator { operator, .. } if operator == "+="),
            &same32,
        ),
    ));
    let k = kernel!(|i, a, b| {
        *a += x[i];
        *b += x[i];
    });
    out.push((
        "two reducers, one reduction".into(),
        refused(q, form, reduction(&s32, Op::Plus), &k,
            &|e| matches!(e, Error::BadArgument { problem, .. } if problem.contains("2 reducer(s)")),
            &|e| matches!(e, Error::BadArgument { problem, .. } if problem.contains("2 reducer(s)")),
            &same32),
    ));
    // Out of range in the host form (undefined on the device, so not launched).
    let k = kernel!(|i, sum| *sum += x[i + 1]);
    out.push((
        "host form: a buffer index out of range".into(),
        outcome(bad("host form", k.run_on_host(q, form, reduction(&s32, Op::Plus)), |e: &Error| {
            matches!(e, Error::BadArgument { name, problem } if name == "x" && problem.contains("index 1000 out of range 0..1000"))
        }), "out of range"),
    ));
    let k = kernel!(|i, hist| hist[i].combine(x[i]));
    out.push((
        "host form: a span index out of range".into(),
        outcome(bad("host form", k.run_on_host(q, form, reduction_span(&v, 1, Op::Plus)), |e: &Error| {
            matches!(e, Error::BadArgument { problem, .. } if problem.contains("span index 1 out of range 0..1"))
        }), "span out of range"),
    ));
    out
}
