//! How a plan prints (`clreduce explain`, `ReduceEvent::plan`): the geometry, each variable's
//! steps with the reason for each choice, launches and memory model.

use super::model::Plan;
use super::request::FormRequest;
use std::fmt;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let form = match self.form {
            FormRequest::Range { n } => format!("range n={n}"),
            FormRequest::NdRange { global, local } => {
                format!("nd_range global={global} local={local}")
            }
        };
        let form = if self.shape.rank > 1 {
            let r = self.shape.rank;
            format!(
                "{form} (shape {:?}{})",
                &self.shape.global[..r],
                if matches!(self.form, FormRequest::NdRange { .. }) {
                    format!(" local {:?}", &self.shape.local[..r])
                } else {
                    String::new()
                }
            )
        } else {
            form
        };
        writeln!(f, "plan on {}: {form}", self.device)?;
        writeln!(
            f,
            "  geometry: {} work-groups x {} work-items, <= {} indices each, order {:?}, {} accumulators{}, {}-bit indices",
            self.groups,
            self.local,
            self.items_per_work_item,
            self.order,
            self.unroll,
            if self.vec > 1 {
                format!(", {} consecutive indices per step", self.vec)
            } else {
                String::new()
            },
            if self.wide_index { 64 } else { 32 }
        )?;
        writeln!(f, "    because {}", self.geometry_reason)?;
        if let Some(sp) = &self.segment {
            write!(f, "{sp}")?;
        }
        for (k, v) in self.vars.iter().enumerate() {
            writeln!(
                f,
                "  var {k}: {} {} -> {} + {}{}",
                v.op,
                v.ty,
                v.group,
                v.cross,
                if v.init_to_identity {
                    " (initialize_to_identity)"
                } else {
                    ""
                }
            )?;
            if let Some(sp) = v.span {
                writeln!(f, "    span of {} elements, {}", sp.len, sp.store.name())?;
            }
            if let Some(e) = v.exact {
                writeln!(
                    f,
                    "    exact sum: {} per work-item slot, a superaccumulator of {} limbs per {} ({}), rounded once to nearest-even",
                    match e.expansion {
                        super::model::Expansion::TwoDouble => "a two-double expansion",
                        super::model::Expansion::ThreeFloat => "a three-float expansion",
                    },
                    e.limbs(),
                    if v.span.is_some() {
                        "span element"
                    } else if e.store == super::model::SaccStore::Carried {
                        "accumulator"
                    } else {
                        "work-group"
                    },
                    match e.store {
                        super::model::SaccStore::LocalAtomic => "local memory, 64-bit local atomics",
                        super::model::SaccStore::LocalRows => "one row per work-item in local memory",
                        super::model::SaccStore::Carried => "private, carried by each accumulator and added exactly wherever accumulators combine",
                    }
                )?;
                if e.speculative {
                    writeln!(f, "    speculative loop: chunks through the branch-free try, a flagged chunk runs again exactly")?;
                    if self.spec_one {
                        writeln!(f, "    the launch's other variables: every unrolled step into one accumulator each")?;
                    }
                }
                match e.hot {
                    super::request::HotLoop::Off => {}
                    super::request::HotLoop::Shared if self.spec_steps > 1 => writeln!(f, "    hot loop: range checks once per chunk; f32 data in blocks into one expansion per work-item; the bound checked once per {} unrolled steps, their loads together", self.spec_steps)?,
                    super::request::HotLoop::Shared => writeln!(f, "    hot loop: range checks once per chunk; f32 data in blocks into one expansion per work-item")?,
                    super::request::HotLoop::Lanes => writeln!(f, "    hot loop: range checks once per chunk; f32 data in blocks per accumulator, each into its own expansion")?,
                    super::request::HotLoop::Vector => writeln!(f, "    hot loop: vector form, each step's elements in one OpenCL vector (range checks, f32 block sums or f64 TwoSums on every lane at once), the lanes merged into one expansion per chunk")?,
                }
                match (v.span, e.store, e.tail) {
                    (Some(_), _, _) | (_, super::model::SaccStore::Carried, _) => {}
                    (_, _, super::request::ExactTail::Private) => writeln!(f, "    tail: work-item 0 sums the published limbs in private memory and rounds them")?,
                    (_, _, super::request::ExactTail::Local) => writeln!(f, "    tail: the published limbs summed in local memory, a limb per work-item, rounded there in place")?,
                    (_, _, super::request::ExactTail::Lean) => writeln!(f, "    tail: work-groups publish unnormalized (the launch's deposits within 2^30); the limbs summed and rounded in local memory")?,
                    (_, _, super::request::ExactTail::Lazy) => writeln!(f, "    tail: lazy: work-groups publish their expansions and only touched limbs; the last one merges the expansions and rounds them directly where no limb was touched")?,
                }
            }
            writeln!(f, "    work-group step: {}", v.group_reason)?;
            writeln!(f, "    cross-group step: {}", v.cross_reason)?;
        }
        writeln!(
            f,
            "  {} launch(es), {}, {} bytes of local memory per work-group, {} with {} last-group atomics",
            self.passes,
            if self.vars.iter().any(|v| v.exact.is_some()) {
                "exact float sums (correctly rounded, the same bits on every device)"
            } else if self.deterministic {
                "deterministic"
            } else {
                "not run-to-run deterministic (relaxed)"
            },
            self.local_bytes,
            self.cl_std.0,
            if self.c11_atomics {
                "OpenCL C 2.0"
            } else if self.ptx_acq_rel {
                "NVIDIA PTX acquire/release"
            } else {
                "OpenCL 1.2"
            }
        )
    }
}
