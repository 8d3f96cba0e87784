//! A small seeded generator (splitmix64) for tests that draw their own inputs and shapes.
//! Included with `#[path = "common/rng.rs"]` or through `common`.

/// splitmix64: the same sequence for the same seed on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `m` (0 when `m` is 0).
    pub fn below(&mut self, m: u64) -> u64 {
        self.next() % m.max(1)
    }
}
