//! One `kernel!` call site ([`Site`], a `static` in the expansion) and the opaque reductions
//! of a host run ([`RedsInput`]): plumbing the expansion names through `clreduce::__private`.

use super::emit::{self, Emitted};
use super::infer::{self, CapTy};
use super::ir::{self, Ir, Ty};
use super::{internal, RedKind};
use crate::api::host::HostReduction;
use crate::Result;
use std::sync::{Arc, Mutex, OnceLock};

/// One `kernel!` call site: its IR (parsed once) and the bodies generated for the capture and
/// reducer types seen there (one, except in generic code).
pub struct Site {
    ir: &'static str,
    parsed: OnceLock<std::result::Result<Ir, String>>,
    #[allow(clippy::type_complexity)]
    bodies: Mutex<
        Vec<(
            Vec<CapTy>,
            Vec<(RedKind, Ty)>,
            Arc<std::result::Result<Emitted, String>>,
        )>,
    >,
}

impl Site {
    /// A call site for the IR string `kernel!` generated from the closure.
    pub const fn new(ir: &'static str) -> Site {
        Site {
            ir,
            parsed: OnceLock::new(),
            bodies: Mutex::new(Vec::new()),
        }
    }
    pub(super) fn ir(&self) -> Result<&Ir> {
        self.parsed
            .get_or_init(|| ir::parse(self.ir))
            .as_ref()
            .map_err(|e| internal(format!("the closure's IR does not parse: {e}")))
    }
    pub(super) fn body(
        &self,
        caps: &[CapTy],
        reds: &[(RedKind, Ty)],
    ) -> Result<Arc<std::result::Result<Emitted, String>>> {
        let ir = self.ir()?;
        let mut bodies = self.bodies.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, e)) = bodies.iter().find(|(c, r, _)| c == caps && r == reds) {
            return Ok(e.clone());
        }
        let red_tys: Vec<Ty> = reds.iter().map(|(_, t)| *t).collect();
        let emitted = infer::infer(ir, caps, &red_tys).and_then(|t| emit::emit(ir, &t, caps, reds));
        let e = Arc::new(emitted);
        bodies.push((caps.to_vec(), reds.to_vec(), e.clone()));
        Ok(e)
    }
}

/// The reductions of a host run (opaque).
pub struct RedsInput<'x>(pub(crate) &'x [HostReduction]);
