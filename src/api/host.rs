//! What the host form of a closure (`clreduce::closure`, `run_on_host`) reads of a launch's
//! reductions: each variable's op, type, span, initial value(s) and argmin/argmax index, with the
//! checks a launch makes of its result buffers.

use super::checks::check_target;
use super::queue::Queue;
use super::reduction::Reduction;
use crate::error::{Error, Result};
use crate::ops::Operator;
use crate::types::ElemType;

/// A reduction as the host form of a kernel closure (`crate::closure`) runs it: its op, element
/// type, span and start, with the variable's current value(s) read from the device.
pub(crate) struct HostReduction {
    pub op: Operator,
    pub ty: ElemType,
    pub span: Option<usize>,
    pub init_to_identity: bool,
    /// The current value of every element (little-endian), span elements included.
    pub bytes: Vec<u8>,
    /// argmin/argmax: the current index.
    pub index: Option<u64>,
}

impl Reduction {
    /// Reads what the host form needs through `queue`, with the checks a launch makes of the
    /// result buffers (`name` is the reducer's name in the body).
    pub(crate) fn read_for_host(&self, queue: &Queue, name: &str) -> Result<HostReduction> {
        let q = &queue.inner;
        let targets = std::iter::once((name.to_string(), &self.target, self.elems())).chain(
            self.index
                .iter()
                .map(|t| (format!("{name} (index buffer)"), t, 1)),
        );
        for (label, t, need) in targets {
            check_target(q, label, t, need)?;
        }
        if self.op.is_arg() && self.index.is_none() {
            return Err(Error::BadArgument {
                name: name.to_string(),
                problem: format!("{} needs an index buffer", self.op),
            });
        }
        let mut bytes = vec![0u8; self.elems() * self.target.ty.size()];
        queue.read_bytes(&self.target.mem, 0, &mut bytes)?;
        let index = match &self.index {
            Some(ix) => {
                let mut b = [0u8; 8];
                queue.read_bytes(&ix.mem, 0, &mut b)?;
                Some(u64::from_le_bytes(b))
            }
            None => None,
        };
        Ok(HostReduction {
            op: self.op.clone(),
            ty: self.target.ty,
            span: self.span,
            init_to_identity: self.init_to_identity,
            bytes,
            index,
        })
    }
}
