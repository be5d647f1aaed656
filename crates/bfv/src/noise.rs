//! The analytic noise model of BFV: conservative bounds, in bits, on the invariant noise
//! numerator `ν = [t·(c_0 + c_1·s (+ c_2·s²))]_{Q_l} = t·e - r_t·m` (`r_t = Q_l mod t`, `m`
//! centred) at the ciphertext's level `l`. Capacity (`log2(Q_l/2)`), key-switching and
//! modulus-switching terms come from [`bgv::noise::NoiseModel`] (its key-switch term is `t` times
//! the switching error, exactly what a BFV key switch adds to `ν`).
//!
//! Canonical-norm estimates as in `bgv::noise` (`D = 6`, `B_e = D·σ·√N`, `B_s = D·√(2N/3)`):
//! - fresh: `t·B_e·(2·B_s + 1) + t·N·t/2` (public key), `t·B_e + t·N·t/2` (secret key);
//! - add: `ν_a + ν_b`; add a plaintext `p`: `ν + t·‖p‖_1`; times `p`: `ν·‖p‖_1`;
//! - product: with `t·c(s) = Q·M + ν` (`‖M‖ ≤ B_M = t·D·√(N/12)·(1 + B_s) + 1` for
//!   ciphertext components uniform mod `Q`),
//!   `ν_× = M_a·ν_b + M_b·ν_a + ν_a·ν_b/Q + t·r(s)`, bounded by
//!   `B_M·(ν_a + ν_b) + ν_a·ν_b/Q + t·ε·D·√N·(1 + B_s + B_s²)` with `ε` the scale-and-round
//!   error bound ([`fhe_math::ScaleRoundTables::max_round_error`] at the top level: it grows
//!   with the level, so the top level's value bounds every level's);
//! - modulus switch from level `l` (`c'_i = (c_i - δ_i)/q_l`, `δ_i = [c_i]_{q_l}` centred):
//!   exactly `ν' = [(ν - t·δ(s))/q_l]_{Q_{l-1}}` with `δ(s) = δ_0 + δ_1·s (+ δ_2·s²)`, so
//!   `‖ν'‖ ≤ ‖ν‖/q_l + t·D·√(N/12)·(1 + B_s)` (`δ_i/q_l` uniform in `[-1/2, 1/2]`: `bgv`'s
//!   modulus-switch term; `(1 + B_s + B_s²)` for a 3-component ciphertext). In the
//!   `Δ`-form: `c'(s) = Δ_{l-1}·m + e'` with `e' = e/q_l + (Δ_l/q_l - Δ_{l-1})·m - δ(s)/q_l`,
//!   `|Δ_l/q_l - Δ_{l-1}| < 1`, i.e. an extra `‖m‖` plus the rounding `(1 + ‖s‖_1)/2`.

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
    round_3: f64,
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
            round_3: (t * D * (n / 12.0).sqrt() * (1.0 + b_s + b_s * b_s)).log2(),
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

    /// `log2(Q/2)` at the top level: the largest `‖ν‖` that still decrypts there.
    pub fn capacity(&self) -> f64 {
        self.base.capacity(self.level)
    }

    /// `log2(Q_l/2)`: the largest `‖ν‖` that still decrypts at `level`.
    pub fn capacity_at(&self, level: usize) -> f64 {
        self.base.capacity(level)
    }

    /// After adding a plaintext of `log2 ‖p‖_1 = p_bits`.
    pub fn after_add_plain(&self, bits: f64, p_bits: f64) -> f64 {
        add_bits(bits, self.log2_t + p_bits)
    }

    /// After the tensor product with scale-and-round at the top level.
    pub fn after_mul(&self, a: f64, b: f64) -> f64 {
        self.after_mul_at(a, b, self.level)
    }

    /// After the tensor product with scale-and-round at `level`:
    /// `B_M·(ν_a + ν_b) + ν_a·ν_b/Q_l + t·ε·D·√N·(1 + B_s + B_s²)`.
    pub fn after_mul_at(&self, a: f64, b: f64, level: usize) -> f64 {
        let cross = self.log2_m + add_bits(a, b);
        let quad = a + b - self.capacity_at(level) - 1.0;
        add_bits(add_bits(cross, quad), self.round)
    }

    /// After a key switch (relinearization or rotation) at the top level.
    pub fn after_key_switch(&self, bits: f64) -> f64 {
        self.base.after_key_switch(bits, self.level)
    }

    /// After a key switch at `level` (`bgv`'s term of that level).
    pub fn after_key_switch_at(&self, bits: f64, level: usize) -> f64 {
        self.base.after_key_switch(bits, level)
    }

    /// After a modulus switch from `level` (≥ 1) of a ciphertext with `components` (2 or 3):
    /// `‖ν'‖ ≤ ‖ν‖/q_l + t·D·√(N/12)·(1 + B_s (+ B_s²))`.
    pub fn after_mod_switch(&self, bits: f64, level: usize, components: usize) -> f64 {
        if components > 2 {
            let log2_q = self.base.capacity(level) - self.base.capacity(level - 1);
            add_bits(bits - log2_q, self.round_3)
        } else {
            self.base.after_mod_switch(bits, level)
        }
    }
}
