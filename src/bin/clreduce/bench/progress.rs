//! The progress bar of `clreduce bench` on stderr (hidden when stderr is not a terminal, and
//! then each step is a `bench: ...` line instead), and messages printed around it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar over `total` steps (one per point and strategy, one per streaming reference).
pub struct Progress {
    pb: ProgressBar,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Progress { pb }
    }

    /// A step as a `bench: ...` line where no bar is drawn.
    pub fn note(&self, m: String) {
        if self.pb.is_hidden() {
            errln!("bench: {m}");
        }
    }

    /// A line on stderr, with the bar out of the way.
    pub fn warn(&self, m: String) {
        self.pb.suspend(|| errln!("{m}"));
    }

    /// What the bar says it is doing.
    pub fn set_message(&self, m: String) {
        self.pb.set_message(m);
    }

    pub fn inc(&self, k: u64) {
        self.pb.inc(k);
    }

    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}
