//! `clreduce devices`: the capability matrix, one column per OpenCL device (or JSON), with the
//! plans auto-selection picks for a few standard requests.

use crate::args::op_identity;
use clreduce::caps::{DeviceCaps, Space};
use clreduce::{devices, reduction, DynBuffer, ElemType, Mask, Op, Options, Queue, Range, Result};

/// Options of `clreduce devices`.
#[derive(clap::Args)]
pub struct DevicesArgs {
    #[arg(long)]
    json: bool,
}

/// One device's rows: (key, value) pairs, and the capabilities its mask or probe removed.
type Column = (Vec<(String, String)>, Vec<String>);

/// `clreduce devices`.
pub fn run(a: &DevicesArgs) -> Result<bool> {
    let devs = devices()?;
    let mut cols: Vec<Column> = Vec::new();
    let mut js = Vec::new();
    for d in devs {
        let caps = d.caps()?;
        let q = Queue::with_mask(d, Mask::default())?;
        let plans = auto_plans(&q);
        if a.json {
            js.push(serde_json::json!({
                "index": d.index(), "label": d.label(), "caps": caps,
                "tuning": clreduce::tune_cache::status(&caps).describe(),
                "auto_plans": plans.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            }));
        } else {
            let mut row = vec![
                ("#".to_string(), d.index().to_string()),
                ("device".into(), d.label()),
            ];
            row.extend(caps_row(&caps));
            row.push(("tuning".into(), tuning(&caps)));
            row.extend(plans.into_iter().map(|(k, v)| (format!("plan {k}"), v)));
            cols.push((row, caps.removed.clone()));
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&js).unwrap_or_default());
        return Ok(true);
    }
    print_transposed(&cols);
    outln!("atomics: g = global, l = local (hardware atomics the probe kernels compiled); plans: group step + cross-group step, range form, n = 2^24 (measured where the device is tuned: clreduce tune); f16/bf16 data: buffers read as f32 with core vload_half or a 16-bit shift, reduced in f32 (fp16, cl_khr_fp16, is half arithmetic, not needed)");
    for f in clreduce::device::platform_errors() {
        outln!("platform skipped (its device query failed): {f}");
    }
    Ok(true)
}

/// The table transposed, one column per device (long names stay readable), then the notes on
/// removed capabilities.
fn print_transposed(cols: &[Column]) {
    let keys: Vec<String> = cols
        .first()
        .map(|(r, _)| r.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let kw = keys.iter().map(|k| k.len()).max().unwrap_or(0);
    let cw: Vec<usize> = cols
        .iter()
        .map(|(r, _)| r.iter().map(|(_, v)| v.len()).max().unwrap_or(0).max(8))
        .collect();
    for (i, k) in keys.iter().enumerate() {
        let mut line = format!("{k:kw$}");
        for (c, (r, _)) in cols.iter().enumerate() {
            line.push_str(&format!(" | {:w$}", r[i].1, w = cw[c]));
        }
        outln!("{}", line.trim_end());
    }
    for (r, removed) in cols {
        for note in removed {
            outln!("note: {}: {note}", r[1].1);
        }
    }
}

/// Whether the device is tuned, in a few words (`clreduce tune --show` says more).
fn tuning(caps: &DeviceCaps) -> String {
    use clreduce::tune_cache::Status;
    match clreduce::tune_cache::status(caps) {
        Status::Tuned(t) => format!("tuned ({} points)", t.entries.len()),
        Status::NotTuned => "not tuned".into(),
        Status::Stale(_) => "stale (ignored)".into(),
        Status::Corrupt(_) => "corrupt cache (ignored)".into(),
        Status::NoPath => "no cache path".into(),
    }
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "-"
    }
}

/// Plans auto-selection picks for the standard requests, as "group+cross" strings.
fn auto_plans(q: &Queue) -> Vec<(String, String)> {
    let n = 1u64 << 24;
    let one = |op, ty| -> String {
        let b = match DynBuffer::scalar(q, op_identity(op, ty)) {
            Ok(b) => b,
            Err(e) => return format!("({e})"),
        };
        match q.explain(Range::new(n), reduction(&b, op), Options::default()) {
            Ok(p) => p.summary(),
            Err(e) => format!(
                "unsupported: {}",
                e.to_string().lines().next().unwrap_or("")
            ),
        }
    };
    let three = || -> String {
        let bs: Result<Vec<DynBuffer>> = [Op::Plus, Op::Minimum, Op::Maximum]
            .iter()
            .map(|&op| DynBuffer::scalar(q, op_identity(op, ElemType::F32)))
            .collect();
        match bs {
            Ok(bs) => {
                let reds = vec![
                    reduction(&bs[0], Op::Plus),
                    reduction(&bs[1], Op::Minimum),
                    reduction(&bs[2], Op::Maximum),
                ];
                match q.explain(Range::new(n), reds, Options::default()) {
                    Ok(p) => p.summary(),
                    Err(e) => format!("unsupported: {e}"),
                }
            }
            Err(e) => format!("({e})"),
        }
    };
    vec![
        ("f32 sum".into(), one(Op::Plus, ElemType::F32)),
        ("i32 sum".into(), one(Op::Plus, ElemType::I32)),
        ("f64 max".into(), one(Op::Maximum, ElemType::F64)),
        ("f32 sum,min,max".into(), three()),
    ]
}

/// The capability rows of one device.
fn caps_row(c: &DeviceCaps) -> Vec<(String, String)> {
    let a = &c.atomics;
    let at = |op, ty| {
        let g = c.fast_atomic(op, ty, Space::Global);
        let l = c.fast_atomic(op, ty, Space::Local);
        match (g, l) {
            (true, true) => "g+l",
            (true, false) => "g",
            (false, true) => "l",
            _ => "-",
        }
        .to_string()
    };
    vec![
        ("type".into(), format!("{:?}", c.kind).to_lowercase()),
        (
            "OpenCL".into(),
            format!(
                "{}.{} / C {}.{}",
                c.opencl_version.0, c.opencl_version.1, c.opencl_c_version.0, c.opencl_c_version.1
            ),
        ),
        ("CUs".into(), c.compute_units.to_string()),
        ("max WG".into(), c.max_work_group_size.to_string()),
        (
            "local mem".into(),
            format!("{} KiB", c.local_mem_size / 1024),
        ),
        ("WG multiple".into(), c.preferred_wg_multiple.to_string()),
        ("i32 add".into(), at(Op::Plus, ElemType::I32)),
        ("i32 min/max".into(), at(Op::Minimum, ElemType::I32)),
        ("i64 add".into(), at(Op::Plus, ElemType::I64)),
        ("i64 min/max".into(), at(Op::Minimum, ElemType::I64)),
        ("f32 add".into(), at(Op::Plus, ElemType::F32)),
        ("f32 min/max".into(), at(Op::Minimum, ElemType::F32)),
        ("f64 add".into(), at(Op::Plus, ElemType::F64)),
        (
            "acq_rel+device".into(),
            yn(a.order_acq_rel && a.scope_device).into(),
        ),
        ("PTX acq_rel (NV)".into(), yn(c.acq_rel_ptx).into()),
        ("wg collectives".into(), yn(c.work_group_collectives).into()),
        ("PTX shuffles (NV)".into(), yn(c.warp_shuffle_ptx).into()),
        (
            "sub-groups".into(),
            match &c.sub_groups {
                Some(s) if s.sizes.is_empty() => "yes".into(),
                Some(s) => s
                    .sizes
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                None => "-".into(),
            },
        ),
        ("fp64".into(), yn(c.fp64).into()),
        ("fp16".into(), yn(c.fp16).into()),
        // f16 and bf16 buffers are read as f32 with core vload_half and a shift: every device
        // (issue 29), whatever fp16 says; the row shows it so no one reads fp16 as the gate.
        (
            "f16/bf16 data".into(),
            if c.supports_type(clreduce::ElemType::F16).is_ok()
                && c.supports_type(clreduce::ElemType::BF16).is_ok()
            {
                "yes".into()
            } else {
                "-".into()
            },
        ),
    ]
}
