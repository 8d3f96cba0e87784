//! Data for a multi-device launch: [`MultiBuffer`], one device buffer per device of a
//! [`MultiQueue`](super::MultiQueue): either each device's *share* of a host slice (scattered
//! by a [`Split`]), the same data on every device (replicated), or the user's own buffers.

use super::split::Split;
use crate::error::{Error, Result};
use crate::runtime::buffer::Buffer;
use crate::types::Element;

/// How a [`MultiBuffer`]'s parts relate to the launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Part `k` holds elements `split.offsets()[k] ..` of one array (`split.counts()[k]` of
    /// them, times `per_unit` elements per unit of the split): the body indexes it with the
    /// share's own `i`.
    Scattered {
        /// The shares, in units.
        split: Split,
        /// Elements per unit.
        per_unit: u64,
    },
    /// Every part holds the whole array (a table every index may read).
    Replicated,
}

/// One buffer per device of a multi-device queue, with its [`Layout`].
#[derive(Debug, Clone)]
pub struct MultiBuffer<T: Element> {
    pub(crate) parts: Vec<Buffer<T>>,
    pub(crate) layout: Layout,
}

impl<T: Element> MultiBuffer<T> {
    /// The user's own buffers, one per device of the queue it will be used with (in its
    /// order): part `k` holds share `k` of `split`, `per_unit` elements per unit (1 for a
    /// 1-D range's elements). Each part needs `counts[k] * per_unit` elements.
    pub fn from_parts(parts: Vec<Buffer<T>>, split: Split, per_unit: u64) -> Result<Self> {
        if parts.len() != split.devices() {
            return Err(Error::BadArgument {
                name: "parts".into(),
                problem: format!(
                    "{} buffers for a split over {} devices",
                    parts.len(),
                    split.devices()
                ),
            });
        }
        for (k, (p, &c)) in parts.iter().zip(split.counts()).enumerate() {
            let need = c.saturating_mul(per_unit);
            if (p.len() as u64) < need {
                return Err(Error::BufferTooShort {
                    name: format!("part {k}"),
                    len: p.len(),
                    need: need as usize,
                });
            }
        }
        Ok(MultiBuffer {
            parts,
            layout: Layout::Scattered { split, per_unit },
        })
    }

    /// The user's own buffers holding the same data on every device.
    pub fn replicated(parts: Vec<Buffer<T>>) -> MultiBuffer<T> {
        MultiBuffer {
            parts,
            layout: Layout::Replicated,
        }
    }

    /// The buffer of device `k`.
    pub fn part(&self, k: usize) -> &Buffer<T> {
        &self.parts[k]
    }
    /// All parts, in device order.
    pub fn parts(&self) -> &[Buffer<T>] {
        &self.parts
    }
    /// How the parts relate to the launch (scattered or replicated).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The split of a scattered buffer.
    pub fn split(&self) -> Option<&Split> {
        match &self.layout {
            Layout::Scattered { split, .. } => Some(split),
            Layout::Replicated => None,
        }
    }

    /// The whole array back on the host: the shares concatenated (a scattered buffer), or
    /// part 0 (replicated).
    pub fn gather(&self) -> Result<Vec<T>> {
        match &self.layout {
            Layout::Replicated => self.parts[0].to_vec(),
            Layout::Scattered { split, per_unit } => {
                let mut out = Vec::with_capacity((split.total() * per_unit) as usize);
                for (p, &c) in self.parts.iter().zip(split.counts()) {
                    let mut part = vec![T::default(); (c * per_unit) as usize];
                    if !part.is_empty() {
                        p.read_into(0, &mut part)?;
                    }
                    out.extend_from_slice(&part);
                }
                Ok(out)
            }
        }
    }
}
