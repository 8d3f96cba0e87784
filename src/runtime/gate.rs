//! A gate: an OpenCL user event that holds back a launch's first kernel until every command of
//! the launch is enqueued. A launch of two passes whose first pass writes some results before
//! its second is enqueued would otherwise need a backup of every result, copied on the device
//! before it (a segmented launch of two passes: 64 MiB at 2^28 f32 in CSR segments of mean
//! length 16), to put the variables back when the second enqueue fails. Behind a gate nothing
//! has run when an enqueue fails: the gate is closed with an error status, which terminates
//! the commands that wait on it (OpenCL 1.1 and later, `clSetUserEventStatus`), and the
//! variables are as they were. Not on a serialized device (Oclgrind): there each command runs
//! to completion as it is enqueued, so one held back would never finish; those keep the backup.

use super::launch::DeviceContext;
use crate::error::{Error, Result};
use opencl3::event::{create_user_event, set_user_event_status, Event, CL_COMPLETE};

/// A user event that the launch's first command waits on; opened (`CL_COMPLETE`) once the
/// launch is enqueued, or cancelled. Dropped unopened, it cancels itself, so that no command
/// waits on it forever.
pub(crate) struct Gate {
    event: Event,
    set: bool,
}

/// The status a cancelled gate gets: any negative value terminates the commands waiting on it.
const CANCELLED: i32 = -1;

impl Gate {
    /// A closed gate in the device's context; `None` on a serialized device, and where
    /// `CLREDUCE_GATE=0` asks for the backup instead (an A/B knob: `1` or unset is the gate,
    /// anything else `UnknownName`).
    pub(crate) fn new(ctx: &DeviceContext) -> Result<Option<Gate>> {
        let wanted = match std::env::var("CLREDUCE_GATE").ok().as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(other) => {
                return Err(Error::UnknownName {
                    kind: "CLREDUCE_GATE value",
                    name: other.to_string(),
                    known: vec!["0", "1"],
                })
            }
        };
        if ctx.serialized() || !wanted {
            return Ok(None);
        }
        let raw = create_user_event(ctx.get()).map_err(|code| Error::Cl {
            call: "clCreateUserEvent",
            code,
        })?;
        Ok(Some(Gate {
            event: Event::new(raw),
            set: false,
        }))
    }

    /// The event the first command waits on.
    pub(crate) fn event(&self) -> &Event {
        &self.event
    }

    /// Lets the held commands run.
    pub(crate) fn open(mut self) -> Result<()> {
        self.set = true;
        set_user_event_status(self.event.get(), CL_COMPLETE).map_err(|code| Error::Cl {
            call: "clSetUserEventStatus",
            code,
        })
    }

    /// Terminates the held commands: none of them runs.
    pub(crate) fn cancel(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if !self.set {
            self.set = true;
            if let Err(code) = set_user_event_status(self.event.get(), CANCELLED) {
                tracing::error!(code, "could not cancel a launch's gate");
            }
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.close();
    }
}
