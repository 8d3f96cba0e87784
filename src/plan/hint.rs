//! The soft hint: how measured data (`tuning.rs`, the table) and the first-use rules
//! (`rules.rs`) steer the planner. A hint is a plan built as if its strategy were forced, kept
//! only if it plans (a mask, a determinism or a form may refuse it), with its reasons rewritten
//! to give the figures behind it.

use super::model::Plan;
use super::request::{Request, Tuning};
use super::strategy::Strategy;
use super::{plan_caps, planned};
use crate::caps::DeviceCaps;

/// Where a hint's steps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Steps {
    /// The rules' own steps, first-use rules included (a measured entry whose fastest plan was
    /// the rules' plan, possibly mixed across variables).
    Rules,
    /// As if this strategy were forced; its automatic parts are the capability rules'.
    Forced(Strategy),
}

/// A soft choice for the planner: plan with `steps` (and `geometry`), keep the plan only if
/// that plans, and give the reasons of what it decided: `why_group` for the work-group step
/// (appended to the rules' reason under `Steps::Rules`), `why_cross` for the cross-group step,
/// `why_geo` for the geometry.
#[derive(Debug, Clone, Default)]
pub(super) struct Hint {
    pub steps: Steps,
    pub geometry: Option<Tuning>,
    pub why_group: String,
    pub why_cross: String,
    pub why_geo: String,
}

impl Default for Steps {
    fn default() -> Steps {
        Steps::Forced(Strategy::AUTO)
    }
}

/// Plans `req` following `hint`; `None` when the hinted plan does not plan (a capability the
/// queue's mask removed, a determinism the request does not allow, a form it does not fit).
/// An expert geometry in the request stays; the hint's geometry applies only without one.
pub(super) fn follow(caps: &DeviceCaps, req: &Request, hint: &Hint) -> Option<Plan> {
    let mut r = req.clone();
    let geometry = match (req.tuning, hint.geometry) {
        (None, Some(g)) => Some(g),
        _ => None,
    };
    if geometry.is_some() {
        r.tuning = geometry;
    }
    let mut p = match hint.steps {
        Steps::Rules => {
            let mut p = planned(caps, None, &r).ok()?;
            for v in &mut p.vars {
                v.group_reason = format!("{}; {}", v.group_reason, hint.why_group);
            }
            p
        }
        Steps::Forced(s) => {
            r.strategy = s;
            let mut p = plan_caps(caps, &r).ok()?;
            for v in &mut p.vars {
                if s.group.is_some() {
                    v.group_reason = hint.why_group.clone();
                }
                if s.cross.is_some() {
                    v.cross_reason = hint.why_cross.clone();
                }
            }
            p
        }
    };
    if geometry.is_some() {
        p.geometry_reason = format!("{} ({})", p.geometry_reason, hint.why_geo);
    }
    Some(p)
}
