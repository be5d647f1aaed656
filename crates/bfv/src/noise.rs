//! The analytic noise model of BFV: conservative bounds, in bits, on the invariant noise
//! numerator `ν = [t·(c_0 + c_1·s (+ c_2·s²))]_Q = t·e - r_t·m` (`r_t = Q mod t`, `m` centred).
//! Capacity and key-switching terms come from [`bgv::noise::NoiseModel`] (its key-switch term is
//! `t` times the switching error, exactly what a BFV key switch adds to `ν`).
//!
//! Canonical-norm estimates as in `bgv::noise` (`D = 6`, `B_e = D·σ·√N`, `B_s = D·√(2N/3)`):
//! - fresh: `t·B_e·(2·B_s + 1) + t·N·t/2` (public key), `t·B_e + t·N·t/2` (secret key);
//! - add: `ν_a + ν_b`; add a plaintext `p`: `ν + t·‖p‖_1`; times `p`: `ν·‖p‖_1`;
//! - product: with `t·c(s) = Q·M + ν` (`‖M‖ ≤ B_M = t·D·√(N/12)·(1 + B_s) + 1` for
//!   ciphertext components uniform mod `Q`),
//!   `ν_× = M_a·ν_b + M_b·ν_a + ν_a·ν_b/Q + t·r(s)`, bounded by
//!   `B_M·(ν_a + ν_b) + ν_a·ν_b/Q + t·ε·D·√N·(1 + B_s + B_s²)` with `ε` the scale-and-round
//!   error bound ([`fhe_math::ScaleRoundTables::max_round_error`]).

use bgv::noise::{D, NoiseModel, SIGMA, add_bits};
use bgv::params::Parameters;

/// The BFV noise model of one parameter set.
#[derive(Clone, Debug)]
pub struct BfvNoise {
    base: NoiseModel,
    fresh_pk: f64,
    fresh_sk: f64,
    log2_m: f64,
    round: f64,
    log2_t: f64,
    level: usize,
}

impl BfvNoise {
    /// The model of `params`, with the scale-and-round error bound `eps`.
    pub fn new(params: &Parameters, eps: f64) -> Self {
        let n = params.n() as f64;
        let t = params.t() as f64;
        let b_e = D * SIGMA * n.sqrt();
        let b_s = D * (2.0 * n / 3.0).sqrt();
        let msg = t * n * t / 2.0;
        BfvNoise {
            base: NoiseModel::new(params),
            fresh_pk: (t * b_e * (2.0 * b_s + 1.0) + msg).log2(),
            fresh_sk: (t * b_e + msg).log2(),
            log2_m: (t * D * (n / 12.0).sqrt() * (1.0 + b_s) + 1.0).log2(),
            round: (t * eps * D * n.sqrt() * (1.0 + b_s + b_s * b_s)).log2(),
            log2_t: t.log2(),
            level: params.max_level(),
        }
    }

    /// Bound of a fresh public-key encryption.
    pub fn fresh_public(&self) -> f64 {
        self.fresh_pk
    }

    /// Bound of a fresh secret-key encryption.
    pub fn fresh_secret(&self) -> f64 {
        self.fresh_sk
    }

    /// `log2(Q/2)`: the largest `‖ν‖` that still decrypts.
    pub fn capacity(&self) -> f64 {
        self.base.capacity(self.level)
    }

    /// After adding a plaintext of `log2 ‖p‖_1 = p_bits`.
    pub fn after_add_plain(&self, bits: f64, p_bits: f64) -> f64 {
        add_bits(bits, self.log2_t + p_bits)
    }

    /// After the tensor product with scale-and-round.
    pub fn after_mul(&self, a: f64, b: f64) -> f64 {
        let cross = self.log2_m + add_bits(a, b);
        let quad = a + b - self.capacity() - 1.0;
        add_bits(add_bits(cross, quad), self.round)
    }

    /// After a key switch (relinearization or rotation).
    pub fn after_key_switch(&self, bits: f64) -> f64 {
        self.base.after_key_switch(bits, self.level)
    }
}
