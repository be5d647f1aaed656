//! The analytic noise model: conservative bounds, in bits, on the **critical quantity**
//! `ν = [c_0 + c_1·s (+ c_2·s²)]_{Q_l}` of a BGV ciphertext at level `l` (message included:
//! `ν = f·m + t·e` as an integer polynomial). Decryption is correct while `‖ν‖_∞ < Q_l / 2`, so
//! the **capacity** at level `l` is `log2(Q_l / 2)` and the remaining budget is
//! `capacity - bound`.
//!
//! Bounds are on the canonical-embedding norm `‖·‖` (which bounds `‖·‖_∞` and is
//! sub-multiplicative: `‖ab‖ ≤ ‖a‖·‖b‖`), with the usual high-probability estimate for a random
//! polynomial whose coefficients have variance `V`: `‖a‖ ≤ D·√(N·V)`, `D = 6` (as in Kim,
//! Polyakov and Zucca, "Revisiting homomorphic encryption schemes for finite fields", 2021):
//! - Gaussian error: `B_e = D·σ·√N` (σ = 3.2); ternary `s`, `u`: `B_s = D·√(2N/3)`;
//! - message (any coefficients in `(-t/2, t/2]`): `‖m‖ ≤ ‖m‖_1 ≤ N·t/2` (worst case, not
//!   heuristic, since messages are chosen by the user);
//! - fresh, public key: `ν = m + t·(e·u + e_0 + e_1·s)`: `N·t/2 + t·B_e·(2·B_s + 1)`;
//!   fresh, secret key: `N·t/2 + t·B_e`;
//! - add: `B_a + B_b`; multiply: `B_a·B_b`; by a plaintext `p`: `B·‖p‖_1` (exact `‖p‖_1` of
//!   the centred coefficients, stored with the plaintext); by an integer `k`: `B·|k|`;
//! - modulus switch from `l`: `B/q_l + B_ms` with `B_ms = t·D·√(N/12)·(1 + B_s)` (the rounding
//!   `δ` is uniform in `[-q_l/2, q_l/2]`);
//! - key switch (relinearize, rotate) at level `l`: `B + B_ks(l)`,
//!   `B_ks = t·(Σ_j ‖d_j‖·B_e / P + D·√(N/12)·(1 + B_s)·κ)`, where digit `j` (`k_j` primes,
//!   product `Q_j`) is raised with fast conversion, so `|d_j| < (k_j - 1/2)·Q_j` and
//!   `‖d_j‖ ≤ D·√N·(k_j - 1/2)·Q_j/√3`; `κ = 2` covers the rare off-by-one overflow of the
//!   `mod_down` conversion.
//!   The automorphism of a rotation permutes the canonical embedding: the norm is unchanged.
//!
//! Tests check that the measured noise never exceeds the bound (see `Decryptor::noise_budget`).

use crate::error::{Error, Result};
use crate::params::Parameters;

/// The factor `D` of the high-probability canonical-norm estimate.
pub const D: f64 = 6.0;
/// The standard deviation of the error distribution.
pub const SIGMA: f64 = 3.2;

/// `log2(2^a + 2^b)` without overflow.
pub fn add_bits(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// Checks the noise bound `bits` of a result at `level` against that level's `capacity`:
/// [`Error::NoiseBudgetExceeded`] for `op` when the bound would reach it (or is NaN). Shared by
/// the BGV and BFV evaluators.
pub fn check_capacity(op: &'static str, bits: f64, capacity: f64, level: usize) -> Result<()> {
    if bits.is_nan() || bits >= capacity {
        return Err(Error::NoiseBudgetExceeded {
            op,
            bound_bits: bits,
            capacity_bits: capacity,
            level,
        });
    }
    Ok(())
}

/// The noise model of one parameter set (all values in bits, i.e. log2 of bounds).
#[derive(Clone, Debug)]
pub struct NoiseModel {
    fresh_pk: f64,
    fresh_sk: f64,
    mod_switch: f64,
    key_switch: Vec<f64>,
    capacity: Vec<f64>,
    log2_q: Vec<f64>,
    log2_t: f64,
    log2_n: f64,
}

impl NoiseModel {
    /// The model of `params`.
    pub fn new(params: &Parameters) -> Self {
        let n = params.n() as f64;
        let t = params.t() as f64;
        let b_e = D * SIGMA * n.sqrt();
        let b_s = D * (2.0 * n / 3.0).sqrt();
        let msg = n * t / 2.0;
        let fresh_pk = (msg + t * b_e * (2.0 * b_s + 1.0)).log2();
        let fresh_sk = (msg + t * b_e).log2();
        let round = D * (n / 12.0).sqrt() * (1.0 + b_s);
        let mod_switch = (t * round).log2();
        let q = params.moduli_q();
        let log2_p = params.log2_p();
        let digits = params.digits();
        let key_switch = (0..q.len())
            .map(|level| {
                let mut sum = 0.0f64;
                for d in digits.iter().filter(|d| d.start <= level) {
                    let primes = &q[d.start..d.end.min(level + 1)];
                    let k = primes.len() as f64;
                    let log2_qd: f64 = primes.iter().map(|&x| (x as f64).log2()).sum();
                    let dj = D * n.sqrt() * (k - 0.5) / 3f64.sqrt();
                    sum += dj * b_e * (log2_qd - log2_p).exp2();
                }
                (t * (sum + 2.0 * round)).log2()
            })
            .collect();
        let log2_q: Vec<f64> = q.iter().map(|&x| (x as f64).log2()).collect();
        let capacity = (0..q.len())
            .map(|l| log2_q[..=l].iter().sum::<f64>() - 1.0)
            .collect();
        NoiseModel {
            fresh_pk,
            fresh_sk,
            mod_switch,
            key_switch,
            capacity,
            log2_q,
            log2_t: t.log2(),
            log2_n: n.log2(),
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

    /// `log2(Q_l / 2)`: the largest noise that still decrypts at `level`.
    pub fn capacity(&self, level: usize) -> f64 {
        self.capacity[level]
    }

    /// Bound after a modulus switch from `level` (≥ 1).
    pub fn after_mod_switch(&self, bits: f64, level: usize) -> f64 {
        add_bits(bits - self.log2_q[level], self.mod_switch)
    }

    /// Bound after a key switch (relinearization or rotation) at `level`.
    pub fn after_key_switch(&self, bits: f64, level: usize) -> f64 {
        add_bits(bits, self.key_switch[level])
    }

    /// The additive term of a key switch at `level`.
    pub fn key_switch_term(&self, level: usize) -> f64 {
        self.key_switch[level]
    }

    /// The additive term of a modulus switch.
    pub fn mod_switch_term(&self) -> f64 {
        self.mod_switch
    }

    /// The worst-case `log2 ‖m‖_1` of a plaintext: `log2(N·t/2)`.
    pub fn message_bits(&self) -> f64 {
        self.log2_n + self.log2_t - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CAT, N13, Parameters, TEST_N11_INSECURE};

    #[test]
    fn add_bits_is_log_of_sum() {
        assert!((add_bits(3.0, 3.0) - 4.0).abs() < 1e-12);
        assert!((add_bits(10.0, f64::NEG_INFINITY) - 10.0).abs() < 1e-12);
        assert!((add_bits(0.0, 1.0) - 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn one_multiplication_per_prime() {
        // A fresh ciphertext squared, relinearized and switched stays below the fresh bound
        // and the steady state is stable: B -> B²/q + B_ms does not grow.
        for lit in [CAT, N13, TEST_N11_INSECURE] {
            let p = Parameters::new(&lit).unwrap();
            let m = NoiseModel::new(&p);
            let top = p.max_level();
            let mut b = m.fresh_public();
            for level in (1..=top).rev() {
                let sq = m.after_key_switch(2.0 * b, level);
                assert!(sq < m.capacity(level), "{lit:?} level {level}");
                b = m.after_mod_switch(sq, level);
            }
            assert!(b < m.fresh_public() && b < m.capacity(0), "{lit:?}: {b}");
            println!(
                "{}: fresh {:.1}, ms {:.1}, ks(top) {:.1}, final {:.1}",
                p.n(),
                m.fresh_public(),
                m.mod_switch_term(),
                m.key_switch_term(top),
                b
            );
        }
    }
}
