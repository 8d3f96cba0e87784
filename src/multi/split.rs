//! How one iteration space is cut into per-device shares ([`Split`]): contiguous runs of
//! *units* (an element of a 1-D range, a work-group of a 1-D nd_range, a slice along the first
//! dimension of a 2-D or 3-D form), sized in proportion to per-device weights (measured
//! throughputs). Pure functions; design/scaleout.md, "The split".

use crate::api::{Form, NdRange, Range};
use crate::error::{Error, Result};

/// The shares of one launch: device `k` takes units `offsets[k] .. offsets[k] + counts[k]`
/// (contiguous, in device order, covering every unit once). A unit is what the form may be cut
/// on ([`units_of`]); for a 1-D `Range` it is one index, so a `Split` made for a host slice
/// of `n` elements scatters it element for element.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Split {
    counts: Vec<u64>,
}

impl Split {
    /// A split with the given number of units per device (device order).
    pub fn from_counts(counts: &[u64]) -> Split {
        Split {
            counts: counts.to_vec(),
        }
    }

    /// `total` units in proportion to `weights` (one per device, finite and >= 0, at least
    /// one > 0): the largest-remainder method, so the counts add up to `total` exactly and
    /// each is within one unit of its exact share. A device of weight 0 gets nothing.
    pub fn proportional(total: u64, weights: &[f64]) -> Result<Split> {
        let sum: f64 = weights.iter().sum();
        if weights.is_empty() || weights.iter().any(|w| !w.is_finite() || *w < 0.0) || sum <= 0.0 {
            return Err(Error::BadArgument {
                name: "weights".into(),
                problem: format!(
                    "{weights:?}: one finite weight >= 0 per device, at least one above 0"
                ),
            });
        }
        let exact: Vec<f64> = weights.iter().map(|w| total as f64 * w / sum).collect();
        let mut counts: Vec<u64> = exact.iter().map(|e| e.floor() as u64).collect();
        // Floating-point shares may overshoot by a unit: never hand out more than `total`.
        while counts.iter().sum::<u64>() > total {
            let k = (0..counts.len()).max_by_key(|&k| counts[k]).unwrap_or(0);
            counts[k] -= 1;
        }
        let mut left = total - counts.iter().sum::<u64>();
        let mut order: Vec<usize> = (0..weights.len()).filter(|&k| weights[k] > 0.0).collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (exact[a] - counts[a] as f64, exact[b] - counts[b] as f64);
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        let mut at = 0;
        while left > 0 && !order.is_empty() {
            counts[order[at % order.len()]] += 1;
            left -= 1;
            at += 1;
        }
        Ok(Split { counts })
    }

    /// Units per device.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }
    /// The first unit of each device's share.
    pub fn offsets(&self) -> Vec<u64> {
        self.counts
            .iter()
            .scan(0u64, |at, &c| {
                let o = *at;
                *at += c;
                Some(o)
            })
            .collect()
    }
    /// All units.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// Number of devices.
    pub fn devices(&self) -> usize {
        self.counts.len()
    }
    /// Each device's fraction of the units (0 for all when there are none).
    pub fn fractions(&self) -> Vec<f64> {
        let t = self.total().max(1) as f64;
        self.counts.iter().map(|&c| c as f64 / t).collect()
    }
}

/// How a form is cut: the number of units and the linear indices per unit. A 1-D range's unit
/// is one index; a 1-D nd_range's one work-group (`local` indices); a 2-D or 3-D form's a
/// slice along its first dimension (for an nd_range, a slice one work-group deep), so that each
/// share is again a form of the same rank with the same inner extents.
pub fn units_of(form: &Form) -> Result<(u64, u64)> {
    match *form {
        Form::Range(r) => {
            let e = r.extents();
            let inner: u64 = e[1..].iter().product();
            Ok((e[0], inner))
        }
        Form::NdRange(r) => {
            let (g, l) = (r.global_extents(), r.local_extents());
            if l.contains(&0) || g.iter().zip(l).any(|(&g, &l)| g % l as u64 != 0) {
                return Err(Error::NdRangeNotDivisible {
                    global: g.iter().map(|&x| x as usize).collect(),
                    local: l.to_vec(),
                });
            }
            let inner: u64 = g[1..].iter().product();
            Ok((g[0] / l[0] as u64, l[0] as u64 * inner))
        }
    }
}

/// The form of a share of `units` units: the same rank and inner extents (and work-group),
/// `units` units along the first dimension.
pub fn share_form(form: &Form, units: u64) -> Form {
    match *form {
        Form::Range(r) => {
            let e = r.extents();
            match e.len() {
                1 => Range::new(units).into(),
                2 => Range::new_2d(units, e[1]).into(),
                _ => Range::new_3d(units, e[1], e[2]).into(),
            }
        }
        Form::NdRange(r) => {
            let (g, l) = (r.global_extents(), r.local_extents());
            let rows = units * l[0] as u64;
            match g.len() {
                1 => NdRange::new(rows, l[0]).into(),
                2 => NdRange::new_2d([rows, g[1]], [l[0], l[1]]).into(),
                _ => NdRange::new_3d([rows, g[1], g[2]], [l[0], l[1], l[2]]).into(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_adds_up_and_follows_the_weights() {
        for total in [0u64, 1, 2, 3, 7, 1000, 1_000_003] {
            for w in [
                vec![1.0],
                vec![1.0, 1.0],
                vec![3.0, 1.0],
                vec![0.0, 1.0],
                vec![1.0, 2.0, 3.0],
                vec![0.3, 0.3, 0.4],
            ] {
                let s = Split::proportional(total, &w).unwrap();
                assert_eq!(s.total(), total, "{total} {w:?}");
                let sum: f64 = w.iter().sum();
                for (k, &c) in s.counts().iter().enumerate() {
                    let exact = total as f64 * w[k] / sum;
                    assert!((c as f64 - exact).abs() < 1.0 + 1e-9, "{total} {w:?} {s:?}");
                    if w[k] == 0.0 {
                        assert_eq!(c, 0);
                    }
                }
            }
        }
        assert_eq!(
            Split::proportional(10, &[3.0, 1.0]).unwrap().counts(),
            &[8, 2]
        );
        assert_eq!(
            Split::proportional(10, &[1.0, 1.0]).unwrap().offsets(),
            vec![0, 5]
        );
    }

    #[test]
    fn bad_weights_are_errors() {
        for w in [vec![], vec![0.0, 0.0], vec![-1.0, 2.0], vec![f64::NAN]] {
            assert!(matches!(
                Split::proportional(5, &w),
                Err(Error::BadArgument { .. })
            ));
        }
    }

    #[test]
    fn units_and_share_forms() {
        let f: Form = Range::new(100).into();
        assert_eq!(units_of(&f).unwrap(), (100, 1));
        let f: Form = NdRange::new(96, 8).into();
        assert_eq!(units_of(&f).unwrap(), (12, 8));
        assert_eq!(share_form(&f, 5), NdRange::new(40, 8).into());
        let f: Form = Range::new_2d(6, 7).into();
        assert_eq!(units_of(&f).unwrap(), (6, 7));
        assert_eq!(share_form(&f, 2), Range::new_2d(2, 7).into());
        let f: Form = NdRange::new_2d([8, 6], [2, 3]).into();
        assert_eq!(units_of(&f).unwrap(), (4, 12));
        assert_eq!(share_form(&f, 1), NdRange::new_2d([2, 6], [2, 3]).into());
        let f: Form = NdRange::new(10, 3).into();
        assert!(matches!(
            units_of(&f),
            Err(Error::NdRangeNotDivisible { .. })
        ));
    }
}
