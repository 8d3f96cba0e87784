//! The tuner's segmented points (issue 26): the rules' segment plan and every forced segment
//! plan of the case's layout (`Case::forces`), timed interleaved and checked like the other
//! points (`measure.rs`), and the decision as a [`SegmentEntry`]: the fastest plan unless its
//! round-by-round gain over the rules' plan is below `1 + margin`.

use super::measure::{fastest, paired_gain, Candidate, Point, PointData};
use super::{rule_options, Log, TuneConfig};
use crate::cases::{Case, Force};
use crate::plan::{segment_layout_key, Plan, SegmentAlgo, SegmentEntry, Strategy, TunedGeometry};
use crate::{Queue, Result};

/// The segment plan a candidate runs.
fn algo(p: &Plan) -> Option<SegmentAlgo> {
    p.segment.as_ref().map(|s| s.algo)
}

/// The rules' plan first, then every forced segment plan that plans something else.
pub(super) fn candidates(pt: &Point) -> Result<Vec<Candidate>> {
    let (q, case, n) = (pt.q, pt.case, pt.n);
    let cus = q.caps().compute_units;
    let mut cands: Vec<Candidate> = Vec::new();
    for f in case.forces() {
        let opts = rule_options(case, f);
        let p = match case.launch(n, pt.x, pt.outs).explain(q, opts) {
            Ok(p) => p,
            Err(e) if f == Force::Auto => return Err(e),
            Err(_) => continue,
        };
        if cands.iter().any(|c| algo(&c.plan) == algo(&p)) {
            continue;
        }
        let g = TunedGeometry::of_plan(&p, cus);
        cands.push(Candidate::new(opts, Strategy::AUTO, g, p));
    }
    Ok(cands)
}

/// Measures one segmented point; `None` when the rules' own plan failed.
pub(super) fn tune_point(
    q: &Queue,
    case: &Case,
    n: u64,
    cfg: &TuneConfig,
    log: &mut Log,
    tick: &mut dyn FnMut(&str),
) -> Result<Option<SegmentEntry>> {
    let data = PointData::new(q, case, n)?;
    let pt = data.point(q, case, n);
    let mut cands = candidates(&pt)?;
    let (warmup, rounds) = (cfg.warmup, cfg.rounds);
    pt.rounds(
        &mut cands,
        warmup,
        rounds,
        cfg.prune_after,
        cfg.prune,
        &mut || tick("segment plans"),
    );
    log.phase("segment plans", &cands);
    let (Some(mut win), true) = (fastest(&cands), cands[0].dropped.is_none()) else {
        return Ok(None);
    };
    if paired_gain(&cands[0], &cands[win]) < 1.0 + cfg.margin {
        win = 0;
    }
    let (Ok(class), Some(seg)) = (case.class(), cands[0].plan.segment.as_ref()) else {
        return Ok(None);
    };
    let name = |c: &Candidate| algo(&c.plan).map_or("?".to_string(), |a| a.to_string());
    Ok(Some(SegmentEntry {
        class,
        layout: segment_layout_key(&seg.layout).into(),
        log2_mean: (seg.mean_len.max(1) as f64).log2().round() as u32,
        shape: case.name.clone(),
        algo: name(&cands[win]),
        best_ns: cands[win].median(),
        rule_algo: name(&cands[0]),
        rule_ns: cands[0].median(),
        tried: cands.len() as u32,
    }))
}

#[cfg(test)]
mod tests {
    use crate::caps::fixtures;
    use crate::ops::Op;
    use crate::plan::{
        plan, plan_segments, CrossAlgo, DeviceKey, FormRequest, GroupAlgo, LaunchClass, Request,
        SegmentAlgo, SegmentEntry, SegmentLayout, SegmentRequest, Shape, Strategy, TuneTable,
        VarRequest,
    };
    use crate::types::ElemType;

    fn entry(layout: &str, log2_mean: u32, algo: &str) -> SegmentEntry {
        SegmentEntry {
            class: f32_sum_class(),
            layout: layout.into(),
            log2_mean,
            shape: format!("f32-{layout} at 2^{log2_mean}"),
            algo: algo.into(),
            best_ns: 1000,
            rule_algo: "item".into(),
            rule_ns: 2000,
            tried: 5,
        }
    }

    /// The class of an f32 sum (the case model's, as the tuner records it).
    fn f32_sum_class() -> LaunchClass {
        crate::cases::Case::parse("f32-rows-4x4")
            .unwrap()
            .class()
            .unwrap()
    }

    /// The table's nearest mean per class and layout, followed by the planner unless a plan is
    /// forced or the layout cannot run it.
    #[test]
    fn the_segmented_planner_follows_the_measurement() {
        let caps = fixtures::pocl_cpu();
        let t = TuneTable {
            key: DeviceKey::new(&caps, "test"),
            measured: "synthetic".into(),
            entries: Vec::new(),
            segments: vec![
                entry("rows", 4, "tiles"),
                entry("rows", 12, "group"),
                entry("cols", 8, "columns"),
            ],
        };
        let class = f32_sum_class();
        let rows = SegmentLayout::Uniform { len: 16 };
        let near = |mean| t.segment_lookup(&class, &rows, mean).map(|(a, _)| a);
        assert_eq!(near(16), Some(SegmentAlgo::Tiles));
        assert_eq!(
            near(256),
            Some(SegmentAlgo::Tiles),
            "2^8: as near 2^4 as 2^12, the smaller wins"
        );
        assert_eq!(near(1 << 11), Some(SegmentAlgo::Group));
        assert_eq!(t.segment_lookup(&class, &SegmentLayout::Offsets, 16), None);
        let i32_class = LaunchClass {
            ty: ElemType::I32,
            ..class.clone()
        };
        assert_eq!(t.segment_lookup(&i32_class, &rows, 16), None);

        let n = 1u64 << 16;
        let base = || {
            let req = Request {
                form: FormRequest::Range { n },
                shape: Shape::linear(n, 1),
                vars: vec![VarRequest::new(Op::Plus, ElemType::F32)],
                strategy: Strategy::new(GroupAlgo::Tree, CrossAlgo::ExtraPass),
                determinism: Default::default(),
                tuning: None,
                pure_body: true,
                narrow_reads: false,
            };
            plan(&caps, &req).unwrap()
        };
        let req = SegmentRequest {
            layout: rows,
            segments: n / 16,
            elements: n,
            force: None,
            tune: Default::default(),
            longest: 16,
            read_bytes: 0,
        };
        let (a, e) = t.segment_lookup(&class, &rows, 16).unwrap();
        let measured = Some((a, e.reason()));
        let p = plan_segments(&caps, base(), &req, measured.clone()).unwrap();
        let s = p.segment.unwrap();
        assert_eq!(s.algo, SegmentAlgo::Tiles);
        assert!(s.reason.contains("measured on this device"), "{}", s.reason);
        let unmeasured = plan_segments(&caps, base(), &req, None).unwrap();
        assert_ne!(
            unmeasured.segment.unwrap().algo,
            SegmentAlgo::Tiles,
            "the rules differ here"
        );
        let forced = SegmentRequest {
            force: Some(SegmentAlgo::Group),
            ..req
        };
        let p = plan_segments(&caps, base(), &forced, measured).unwrap();
        assert_eq!(p.segment.unwrap().algo, SegmentAlgo::Group, "forcing wins");
        let cols = Some((SegmentAlgo::Columns, "measured".to_string()));
        let p = plan_segments(&caps, base(), &req, cols).unwrap();
        assert_ne!(
            p.segment.unwrap().algo,
            SegmentAlgo::Columns,
            "rows cannot run columns"
        );
    }
}
