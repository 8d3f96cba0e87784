//! `clreduce reduce --json`: one object per device with its variables. A result is written as
//! the shortest decimal string that reads back to the same value (Rust's `{}` for f32/f64;
//! integers in decimal) and as its bit pattern in lowercase hex at the type's width; argmin and
//! argmax also carry the index, spans a list per bin.

use super::check::{Got, Verdict};
use crate::vars::VarOp;
use clreduce::plan::Plan;
use clreduce::{Device, ElemType, Value};
use serde_json::{json, Map, Value as Json};

/// A value as (shortest round-trip decimal, bits in lowercase hex at the type's width).
pub fn value_text(v: Value) -> (String, String) {
    match v {
        Value::I32(x) => (x.to_string(), format!("{:08x}", x as u32)),
        Value::U32(x) => (x.to_string(), format!("{x:08x}")),
        Value::I64(x) => (x.to_string(), format!("{:016x}", x as u64)),
        Value::U64(x) => (x.to_string(), format!("{x:016x}")),
        Value::F32(x) => (format!("{x}"), format!("{:08x}", x.to_bits())),
        Value::F64(x) => (format!("{x}"), format!("{:016x}", x.to_bits())),
    }
}

/// What one device ran.
pub struct Ran<'a> {
    pub device: &'a Device,
    pub ty: ElemType,
    pub n: u64,
    pub input: &'a str,
    pub body: &'a str,
    pub plan: &'a Plan,
    pub device_time_ns: u64,
}

/// The object of a device that ran: its input, plan, time and variables.
pub fn ran(r: &Ran, vars: &[VarOp], got: &[Got], verdicts: &[Verdict]) -> Json {
    let vs: Vec<Json> = vars
        .iter()
        .enumerate()
        .map(|(k, v)| var(r, k, v, &got[k], &verdicts[k]))
        .collect();
    json!({
        "device": r.device.label(),
        "device_index": r.device.index(),
        "n": r.n,
        "type": r.ty.to_string(),
        "input": r.input,
        "body": r.body,
        "plan": r.plan.summary(),
        "device_time_ns": r.device_time_ns,
        "pass": verdicts.iter().all(|v| v.ok),
        "vars": vs,
    })
}

/// The object of a device that did not run the launch (with `--device all`): `key` is
/// `"skipped"` (the device lacks what the run needs) or `"error"` (the command exits 2).
pub fn refused(d: &Device, key: &str, why: &str) -> Json {
    let mut o = Map::new();
    o.insert("device".into(), d.label().into());
    o.insert("device_index".into(), d.index().into());
    o.insert(key.into(), why.into());
    o.insert("vars".into(), Json::Array(Vec::new()));
    Json::Object(o)
}

fn var(r: &Ran, k: usize, v: &VarOp, got: &Got, verdict: &Verdict) -> Json {
    let vp = &r.plan.vars[k];
    let mut o = Map::new();
    o.insert("op".into(), v.label().into());
    o.insert("type".into(), r.ty.to_string().into());
    o.insert("plan".into(), format!("{}+{}", vp.group, vp.cross).into());
    if let Some(s) = vp.span {
        o.insert("span".into(), s.len.into());
        o.insert("span_store".into(), s.store.name().into());
    }
    match got {
        Got::Scalar(x) => {
            let (d, b) = value_text(*x);
            o.insert("result".into(), d.into());
            o.insert("bits".into(), b.into());
        }
        Got::Arg(x, i) => {
            let (d, b) = value_text(*x);
            o.insert("result".into(), d.into());
            o.insert("bits".into(), b.into());
            o.insert("index".into(), (*i).into());
        }
        Got::Span(xs) => {
            let (ds, bs): (Vec<String>, Vec<String>) = xs.iter().map(|x| value_text(*x)).unzip();
            o.insert("result".into(), ds.into());
            o.insert("bits".into(), bs.into());
        }
        // Per-segment results (the case model's; this command's segmented form writes its own).
        Got::Segments(xs) | Got::ArgSegments(xs, _) => {
            let (ds, bs): (Vec<String>, Vec<String>) =
                (0..xs.len()).map(|k| value_text(xs.value(k))).unzip();
            o.insert("result".into(), ds.into());
            o.insert("bits".into(), bs.into());
            if let Got::ArgSegments(_, ix) = got {
                o.insert("index".into(), ix.clone().into());
            }
        }
    }
    o.insert("reference".into(), verdict.reference.clone().into());
    let (check, detail) = if verdict.ok {
        let detail = verdict
            .check
            .strip_prefix("OK (")
            .and_then(|d| d.strip_suffix(')'))
            .unwrap_or("");
        ("OK".to_string(), detail.to_string())
    } else {
        (verdict.check.clone(), String::new())
    };
    o.insert("check".into(), check.into());
    if !detail.is_empty() {
        o.insert("check_detail".into(), detail.into());
    }
    Json::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_and_bits() {
        assert_eq!(
            value_text(Value::F32(0.1)),
            ("0.1".to_string(), "3dcccccd".to_string())
        );
        assert_eq!(
            value_text(Value::F64(-2.5)),
            ("-2.5".to_string(), "c004000000000000".to_string())
        );
        assert_eq!(
            value_text(Value::I32(-1)),
            ("-1".to_string(), "ffffffff".to_string())
        );
        assert_eq!(
            value_text(Value::I64(5)),
            ("5".to_string(), "0000000000000005".to_string())
        );
        assert_eq!(value_text(Value::U32(255)).1, "000000ff");
        assert_eq!(value_text(Value::U64(u64::MAX)).0, "18446744073709551615");
        // The decimal reads back to the same bits, for awkward values too.
        for x in [f32::MIN_POSITIVE, 1.0e-45, 3.4028235e38, 16777217.0, -0.0] {
            let (d, b) = value_text(Value::F32(x));
            assert_eq!(d.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{d}");
            assert_eq!(u32::from_str_radix(&b, 16).unwrap(), x.to_bits());
        }
        for x in [f64::MIN_POSITIVE, 5e-324, f64::MAX, 0.1 + 0.2] {
            let (d, _) = value_text(Value::F64(x));
            assert_eq!(d.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{d}");
        }
    }
}
