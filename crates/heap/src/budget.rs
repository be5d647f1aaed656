//! The noise, failure and precision model of HEAP.md §4 (the formulas of
//! `crates/tfhe-switch/tools/heap_budget.py`) for a parameter set and its chosen primes.

use crate::params::HeapParams;
use fhe_math::backend::rns_blind_rotate::KEYS_PER_PAIR;

const V_RING: f64 = 3.2 * 3.2;

/// The model's figures for one parameter set and slot count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Standard deviation of the blind rotation's input phase, in units of `Z_2N`.
    pub sigma_x: f64,
    /// log2 of the failure probability per coefficient.
    pub log2_failure_per_coefficient: f64,
    /// log2 of the failure probability per bootstrap (`2·slots` coefficients).
    pub log2_failure_per_bootstrap: f64,
    /// The input's noise (rescale into level 0 and encapsulation), coefficient units.
    pub sigma_in: f64,
    /// The output's noise after the rescales by `R`, coefficient units.
    pub sigma_out: f64,
    /// Expected precision, bits of the largest slot error (median over inputs).
    pub precision_max_bits: f64,
    /// Expected precision, bits of the median slot error.
    pub precision_median_bits: f64,
}

fn log2_tail(t: f64, sigma: f64) -> f64 {
    -(t * t) / (2.0 * sigma * sigma) / std::f64::consts::LN_2
}

/// The model for `params` with the chain `moduli_q` (`q_0 … q_L`), input scale `delta_in`,
/// output scale `delta_out`, and `slots` slots (`|z| ≤ 1`).
pub fn budget(
    params: &HeapParams,
    moduli_q: &[u64],
    delta_in: f64,
    delta_out: f64,
    slots: usize,
) -> Budget {
    let n = params.n() as f64;
    let h = params.sparse_weight as f64;
    let q0 = moduli_q[0] as f64;
    let rho = 2f64.sqrt() * delta_in / q0;
    // LWE side (units of Z_2N).
    let q_ks = 2f64.powi(params.log_q_ks as i32);
    let unit = q_ks / (2.0 * n);
    let ms1 = (1.0 + h) / 12.0 / (unit * unit);
    let b = params.ks_base_log as i32;
    let kept = params.ks_base_log as usize * params.ks_levels;
    let d2 = (4f64.powi(b) + 2.0) / 12.0;
    let bound = params.lwe_noise_bound as f64;
    let v_lwe = bound * (bound + 1.0) / 3.0;
    let ks_noise = n * params.ks_levels as f64 * d2 * v_lwe;
    let ks_round = if kept < params.log_q_ks as usize {
        h * q_ks * q_ks / (12.0 * 4f64.powi(kept as i32))
    } else {
        0.0
    };
    let ks = (ks_noise + ks_round) / (unit * unit);
    let ms2 = (1.0 + params.lwe_dimension as f64 / 2.0) / 12.0;
    let sigma_x = (ms1 + ks + ms2).sqrt();
    let kp = params.k_prime as f64;
    let w = 2.0 * n / kp;
    let sigma_i = ((1.0 + h) / 12.0).sqrt();
    let p_range = log2_tail(kp / 4.0 - 0.5 - rho, sigma_i);
    let p_step = log2_tail(w * (0.5 - rho), sigma_x);
    let p_coef = (2f64.powf(p_range) + 2f64.powf(p_step)).log2();
    let p_coef = if p_coef.is_finite() {
        p_coef
    } else {
        p_range.max(p_step)
    };
    let p_boot = p_coef + ((2 * slots) as f64).log2();
    // Ring side.
    let limbs = moduli_q.len();
    let sum_d: f64 = (0..limbs)
        .step_by(params.digit_limbs)
        .map(|a| {
            let qj: f64 = moduli_q[a..(a + params.digit_limbs).min(limbs)]
                .iter()
                .map(|&q| q as f64)
                .product();
            qj * qj / 12.0
        })
        .sum();
    let v_row = n * V_RING * sum_d;
    let n_br = (2 * slots) as f64;
    // Per pair of LWE coefficients (key unrolling) three key products of 2 decomposed
    // components, each multiplied by X^e − 1 (twice the variance).
    let pairs = (params.lwe_dimension / 2) as f64;
    let v_br = pairs * KEYS_PER_PAIR as f64 * 2.0 * v_row * 2.0;
    let v_pack = n_br * n_br * v_br + (n_br * n_br - 1.0) / 3.0 * v_row;
    let trace = n / n_br;
    let v_corr = (v_pack + v_row) * trace * trace;
    let r: f64 = moduli_q[params.output_level() + 1..]
        .iter()
        .map(|&q| q as f64)
        .product();
    let v_rescale = (1.0 + n * 2.0 / 3.0) / 12.0;
    let sigma_out = (v_corr / (r * r) + v_rescale).sqrt();
    let sigma_in = (v_rescale + (1.0 + h) / 12.0).sqrt();
    let rel2 = (sigma_in / delta_in).powi(2) + (sigma_out / delta_out).powi(2);
    let sigma_part = (n / 2.0 * rel2).sqrt();
    let t_max = (2.0 * (slots as f64 / std::f64::consts::LN_2).ln())
        .max(0.0)
        .sqrt()
        .max(1.18);
    let t_med = (2.0 * std::f64::consts::LN_2).sqrt();
    Budget {
        sigma_x,
        log2_failure_per_coefficient: p_coef,
        log2_failure_per_bootstrap: p_boot,
        sigma_in,
        sigma_out,
        precision_max_bits: -(t_max * sigma_part).log2(),
        precision_median_bits: -(t_med * sigma_part).log2(),
    }
}
