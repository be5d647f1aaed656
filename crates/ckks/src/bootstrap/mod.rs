//! CKKS bootstrapping: a ciphertext at level 0 refreshed to a higher level, written once over
//! the backend.
//!
//! # Pipeline
//!
//! With `m` the message polynomial (`m = Δ_0·FFT⁻¹(z)` for slots `z`) and `s` the secret:
//!
//! 1. **ModRaise** ([`Bootstrapper::mod_raise`]): the level-0 ciphertext `(c_0, c_1)`, centred
//!    modulo `q_0`, read over the whole chain `Q_L`: it decrypts to `m + q_0·I` with an integer
//!    polynomial `I`, `|I_k| ≤ K` (a small `K` needs a sparse secret: `I_k` is a sum of `h`
//!    terms of `c_1·s`, standard deviation about `√(h/12)`; with a dense main secret the
//!    level-0 ciphertext is first switched to a sparse ephemeral one and the raised one back,
//!    [`encapsulation`]). Declared scale `Δ_L`. For sparse slots (`n < N/2`) CoeffToSlot
//!    starts with a rotation sum and packs the two halves into one ciphertext
//!    ([`Bootstrapper::with_slots`]).
//! 2. **CoeffToSlot** ([`Bootstrapper::coeff_to_slot`]): the inverse homomorphic DFT, a few
//!    sparse BSGS matrices ([`dft`]) whose product maps the slots to
//!    `bitrev(w)/(2·q_0·K)`, `w_k = P_k + i·P_{k+s}` the paired coefficients of `P = m + q_0·I`;
//!    then the conjugation splits real and imaginary parts:
//!    `re = ct + conj(ct)`, `im = −i·(ct − conj(ct))` (`−i` is the monomial `−X^{N/2}`, exact),
//!    each with slots `y = P_k/(q_0·K) ∈ [−1, 1]`.
//! 3. **EvalMod** ([`Bootstrapper::eval_mod`]) on each: `x = K·y = I_k + m_k/q_0`, and
//!    `sin(2πx) = cos(2π(x − ¼))` removes `I_k`: the cosine of `2π(x − ¼)/2^r` is a Chebyshev
//!    interpolant of degree `d` in `y` on `[−1, 1]` ([`crate::poly_eval`]), followed by `r`
//!    double-angle steps `c → 2c² − 1`; optionally the arcsine's cubic term,
//!    `x ≈ (σ + σ³/6)/(2π)` with `σ = sin 2πx`, removes the sine's own `(2π)²x³/6` error.
//! 4. **SlotToCoeff** ([`Bootstrapper::slot_to_coeff`]): `re + i·im` (slots
//!    `sin(2π·bitrev(w)/q_0) ≈ 2π·bitrev(w(m))/q_0`) through the forward DFT matrices, scaled by
//!    `q_0/(2π·Δ_0)` (`q_0/Δ_0` with the arcsine), gives the slots `z` again, on the ladder.
//!
//! # Levels and precision
//!
//! CoeffToSlot and SlotToCoeff take one level per matrix; EvalMod
//! `depth(d) + r (+ 2 with the arcsine)` ([`BootstrapLevels`]). The result is at level
//! `L − total` with the ladder scale of that level. Precision is limited by the sine's cubic
//! term (relative `(2π)²x²/6` with `|x| ≤ |m_k|/q_0`, so the ratio `q_0/Δ_0` matters: a
//! larger one shrinks it), by EvalMod's rounding noise amplified by the double angles and by
//! `q_0/Δ_0`, and by the approximation error of the cosine.
//!
//! Measured on the CPU (max-error bits / median-error bits, inputs uniform in `[−1, 1]` real
//! and imaginary), 2026-11-29:
//!
//! | parameters | secret | slots | bits | median | time (2 shared cores) |
//! |---|---|---|---|---|---|
//! | `BOOT_N12_INSECURE`, `BOOT_N12_CONFIG` | sparse, weight 32 | 2048 | 26.5 | 28.2 | 1.0-2.2 s |
//! | `BOOT_N12_INSECURE`, `BOOT_N12_CONFIG` | sparse, weight 32 | 64 | 27.6 | 28.5 | 0.4-2.2 s |
//! | `BOOT_N12_INSECURE`, `BOOT_N12_CONFIG` | dense, encapsulated | 2048 | 23.3 | 25.0 | 0.8-1.9 s |
//! | `BOOT_N16`'s chain at `N = 2^14`, `BOOT_N16_CONFIG` (degree 119 then) | dense, encapsulated | 8192 | 27.2 | 29.1 | 12.2 s |
//! | `BOOT_N12_MIXED_INSECURE` (mixed chain), `BOOT_N12_CONFIG` | sparse, weight 32 | 2048 | 26.5 | 28.2 | 0.6 s |
//! | `BOOT_N16`, `BOOT_N16_CONFIG` | dense, encapsulated | 32768 | 24.6 | 26.6 | 24.0 s |
//! | `BOOT_N16_MIXED` (mixed chain), `BOOT_N16_MIXED_CONFIG` | dense, encapsulated | 32768 | 24.4-24.6 | 26.5-26.6 | 19.4-21.3 s |
//! | `BOOT_N16_STC_FIRST` (SlotToCoeff first, 40-bit levels), `BOOT_N16_STC_FIRST_CONFIG` | dense, encapsulated | 32768 | 19.2 | 22.2 | 14.6 s |
//! | `BOOT_N12_STC_FIRST_INSECURE`, `BOOT_N12_STC_FIRST_CONFIG` | sparse, weight 32 / dense, encapsulated | 2048 | 27.7 / 23.9 | 30.6 / 28.6 | 0.5 s |
//!
//! (The two `N = 2^16` rows: one run each with the same seeds, commit after `eea29a2`, the
//! ignored test `bootstrap_n16_presets_on_the_cpu`; the mixed chain's 45-bit application
//! levels cost no precision, its key switches' modelled NTT work is 0.84 of `BOOT_N16`'s,
//! [`BootstrapPlan::ntt_limbs`].)
//!
//! On the H200 (`gpu_bench --presets boot:BOOT_N16_MIXED` and `boot:BOOT_N16`, wall time,
//! median of 5, 2026-11-29, commit f30c181): `BOOT_N16_MIXED` with `BOOT_N16_MIXED_CONFIG` in
//! 36.3 ms, 24.52 max / 26.54 median bits, 9 levels of 45 bits left (ModRaise 1.2 ms,
//! CoeffToSlot 10.5, EvalMod 17.7 for both halves side by side, 9.7 for one, SlotToCoeff
//! 6.6); `BOOT_N16` with `BOOT_N16_CONFIG` in 42.7 ms, 24.6 / 26.6 bits, 9 levels of 57 bits.
//! `BOOT_N16_STC_FIRST` with `BOOT_N16_STC_FIRST_CONFIG` (SlotToCoeff first): BENCHMARKS.md
//! section 10.
//! Every stage is bound by its key switches (0.34 ms a product at EvalMod's input level,
//! 0.36 ms a rotation at the top, `BOOT_N16_MIXED`): their NTTs and base conversions, not the
//! key bytes (7-36x the key-read floor).
//!
//! What makes it that fast: [`Evaluator::drop_to_level`] takes one rescale for any distance
//! (the polynomial evaluation lowers powers often); the lower part `r` of each
//! Paterson–Stockmeyer split `q·T_m + r`, and the `T_c` of each Chebyshev power
//! `T_i = 2·T_a·T_b − T_c`, join the product before its rescale
//! ([`Evaluator::mul_add_relin_rescale`]: a leaf formed at the product's scale `Δ²`, a subtree
//! or `T_c` multiplied by an integer), and the leaves read the higher powers with their top
//! limbs dropped, so none of these needs a rescale of its own (standalone rescales 38 → 14 an
//! EvalMod half; EvalMod 11.8 → 9.7 ms a half, H200); with a side evaluator
//! ([`Bootstrapper::with_side_evaluator`], a second stream of the GPU) the two halves run side
//! by side (both 17.7 ms against 2 × 9.7); a linear transform rescales once, fused with the
//! giant steps' shared `mod_down`, forms each inner sum in one fused pass
//! ([`fhe_math::backend::RingBackend::mul_plain_sum`]), and splits its diagonals into more
//! baby steps (one shared `mod_up`) and fewer giant steps (a `mod_up` each) where the key
//! switch count allows, giant steps taken modulo the slot count; a power is lowered to a level
//! once for every product, difference and leaf that needs it there.
//!
//! A dense secret costs about 3 bits against a sparse one: every rescale's rounding
//! `e_0 + e_1·s` grows with `‖s‖`. The rounding noise is amplified by `K·q_0/Δ_0`, so each bit
//! of scale gains about two bits while the arcsine's residual (which grows as `q_0/Δ_0`
//! shrinks) stays below it: at `N = 2^14` the `BOOT_N16` shape measured 24.1 bits with 56-bit
//! scales (degree 31, three double angles), 24.2 with 58 (the residual, `q_0/Δ_0 = 4`) and
//! 27.2 with 57. Each doubling of `N` costs roughly 1.5 bits.
//!
//! The plaintext diagonals and the Chebyshev coefficients are computed once on the host in
//! `f64` ([`dft`], [`eval_mod`]); every backend encodes the same integers, so the CPU and
//! CUDA backends give the same ciphertext words.

pub mod dft;
pub mod encapsulation;
pub mod eval_mod;
pub mod plan;

pub use encapsulation::EncapsulationKeys;
pub use plan::{BootstrapPlan, StageBytes};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::linear_transform::LinearTransform;
use crate::poly_eval::{PolyPlan, Polynomial};
use fhe_math::backend::KeySwitchBackend;
use fhe_math::poly::Shape;
use rlwe::{Ciphertext, GaloisKeys, Meta, Plaintext, RelinKey};

pub(crate) fn bad(reason: impl Into<String>) -> Error {
    Error::Bootstrap {
        reason: reason.into(),
    }
}

/// How to bootstrap: levels of each stage and the EvalMod approximation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BootstrapConfig {
    /// Levels (matrices) of CoeffToSlot, 1..=log2(slots).
    pub cts_levels: usize,
    /// Levels (matrices) of SlotToCoeff, 1..=log2(slots).
    pub stc_levels: usize,
    /// EvalMod's interval `[−K, K]` for `x = I_k + m_k/q_0` (`K` above the largest `|I_k|`
    /// plus a margin).
    pub k: f64,
    /// Degree of the Chebyshev interpolant of the scaled cosine.
    pub cos_degree: usize,
    /// Double-angle steps `r` (the cosine is taken of `2π(x − ¼)/2^r`).
    pub double_angle: usize,
    /// Whether to apply the arcsine's cubic correction (two more levels).
    pub arcsine: bool,
    /// SlotToCoeff first: its matrices run on the input, at its lowest levels (few limbs),
    /// before ModRaise, and EvalMod's output needs only one landing level; the input must keep
    /// `stc_levels` levels ([`BootstrapLevels::input_level`]). Full slots only. The input's
    /// coefficients are then its slot values (up to `Δ_0`, about `√N` times the usual order's),
    /// so the chain needs a larger `q_0/Δ_0` for the same EvalMod error (the sine's or the
    /// arcsine's truncation), whose error reaches the slots without SlotToCoeff's growth.
    pub slot_to_coeff_first: bool,
}

/// A configuration for bootstrapping at [`crate::params::BOOT_N12_INSECURE`] (sparse secret of
/// weight 32, so `|I_k| ≤ 12` with overwhelming probability): 3 + 10 + 3 levels (the cosine
/// of degree 31 takes 5, three double angles, the arcsine 2).
pub const BOOT_N12_CONFIG: BootstrapConfig = BootstrapConfig {
    cts_levels: 3,
    stc_levels: 3,
    k: 12.0,
    cos_degree: 31,
    double_angle: 3,
    arcsine: true,
    slot_to_coeff_first: false,
};

/// The configuration for [`crate::params::BOOT_N16`] (2^15 full slots, a dense secret with
/// sparse-secret encapsulation at weight [`crate::params::BOOT_SECRET_WEIGHT`]):
/// CoeffToSlot 4 levels (15 stages in groups of 4, 4, 4, 3), EvalMod 9 (`K = 12`, the cosine
/// itself at degree 111, depth 7, 23 products, no double angle, the arcsine 2), SlotToCoeff 3
/// (5 stages each): 16 levels, 9 left.
///
/// Why this EvalMod (H200, 2026-11-29, max / median bits at `N = 2^16`): within 9 levels the
/// double-angle shapes lose precision: degree 63 with one double angle 21.3 / 23.2 (its
/// interpolant is good to 2^-30.6 near the integers, and the slot error grows it about
/// `√N·q_0/Δ_0`-fold), degree 47 with two 23.2 / 25.1 but 10 levels (8 left). Degree 119
/// without double angle measured 24.7 / 26.6 at 24 products, degree 111 the same at 23
/// (interpolant 2^-38); below about 107 the interpolant error shows.
pub const BOOT_N16_CONFIG: BootstrapConfig = BootstrapConfig {
    cts_levels: 4,
    stc_levels: 3,
    k: 12.0,
    cos_degree: 111,
    double_angle: 0,
    arcsine: true,
    slot_to_coeff_first: false,
};

/// The configuration for [`crate::params::BOOT_N16_MIXED`]: [`BOOT_N16_CONFIG`]'s stages (the
/// mixed chain keeps `q_0/Δ_0 ≈ 2^3` and 57-bit bootstrapping scales), 16 levels, 9 of 45 bits
/// left; SlotToCoeff's last matrix, at level 10, crosses the ladder step.
pub const BOOT_N16_MIXED_CONFIG: BootstrapConfig = BOOT_N16_CONFIG;

/// The configuration for [`crate::params::BOOT_N16_STC_FIRST`]: SlotToCoeff first (its 3
/// matrices on the input at levels 3 … 1, before ModRaise), CoeffToSlot 4 levels, EvalMod 8
/// (`K = 12`, the cosine at degree 47, two double angles, **no arcsine**: at
/// `q_0/Δ_0 = 2^12` the sine's cubic term stays below `2^-21` of the message), one landing
/// level: 13 levels at the top, the input at level 3.
///
/// How it was chosen (2026-11-29; H200 wall and bits from `gpu_bench`, CPU bits from the
/// ignored test `bootstrap_n16_stc_first_on_the_cpu`): on a 27-prime chain in the usual order
/// (`q_0/Δ_0 = 2^3`, 40-bit application levels, commit 0ef1f0a) EvalMod of degree 47 with two
/// double angles and the arcsine took 32.6 ms at 21.6 / 24.0 bits (degree 31 with three: 32.5
/// ms, 19.9 / 23.9), against 36.7 for `BOOT_N16_MIXED`; SlotToCoeff first with the arcsine
/// (28 primes, `q_0/Δ_0 = 2^9`, commit 0c674e1) 30.9 ms at 22.4 / 25.6 bits; without the
/// arcsine two levels fewer. `q_0/Δ_0` sets the balance of the sine's cubic term against the
/// amplified EvalMod error: on the CPU `2^11` gave 18.6 / 20.7 bits, `2^12` 19.2 / 22.2, `2^14`
/// 17.0 / 21.7; degree 63 instead of 47 and 60-bit bootstrapping primes changed nothing.
pub const BOOT_N16_STC_FIRST_CONFIG: BootstrapConfig = BootstrapConfig {
    cts_levels: 4,
    stc_levels: 3,
    k: 12.0,
    cos_degree: 47,
    double_angle: 2,
    arcsine: false,
    slot_to_coeff_first: true,
};

/// [`BOOT_N12_CONFIG`] with SlotToCoeff first, for
/// [`crate::params::BOOT_N12_STC_FIRST_INSECURE`]: the input at level 3, 3 + 10 + 1 levels at
/// the top.
pub const BOOT_N12_STC_FIRST_CONFIG: BootstrapConfig = BootstrapConfig {
    slot_to_coeff_first: true,
    ..BOOT_N12_CONFIG
};

/// Levels each stage consumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootstrapLevels {
    /// The level the input is taken at: 0, or `stc_levels` with SlotToCoeff first (a higher
    /// input is dropped to it).
    pub input_level: usize,
    /// CoeffToSlot (one per matrix).
    pub coeff_to_slot: usize,
    /// EvalMod (the cosine's polynomial depth, the double angles, the arcsine).
    pub eval_mod: usize,
    /// SlotToCoeff (one per matrix; with SlotToCoeff first, at the input's levels, and one
    /// landing level after EvalMod).
    pub slot_to_coeff: usize,
    /// The level of a bootstrapped ciphertext: `L` minus CoeffToSlot, EvalMod and
    /// SlotToCoeff (or the one landing level).
    pub output_level: usize,
}

/// Bootstrapping for one context: the encoded DFT matrices, the EvalMod polynomial and the
/// constants, built once ([`Bootstrapper::new`]) and applied to any number of ciphertexts.
pub struct Bootstrapper<B: KeySwitchBackend> {
    eval: Evaluator<B>,
    config: BootstrapConfig,
    /// The slot count `n` (`N/2`: full slots).
    slots: usize,
    /// `n < N/2`.
    sparse: bool,
    /// The rotation sum's steps ([`BootstrapPlan::sub_sum_steps`]).
    sub_sum: Vec<i64>,
    levels: BootstrapLevels,
    cts: Vec<LinearTransform<B>>,
    /// SlotToCoeff after EvalMod, or (SlotToCoeff first) the landing matrix.
    stc: Vec<LinearTransform<B>>,
    /// SlotToCoeff before ModRaise (empty unless SlotToCoeff first).
    stc_first: Vec<LinearTransform<B>>,
    cosine: Polynomial,
    plan: PolyPlan,
    arcsine: Option<Polynomial>,
    /// `−i` at CoeffToSlot's output level and `+i` at SlotToCoeff's input level
    /// ([`Bootstrapper::times_monomial`]), encoded once.
    monomials: [Plaintext<B>; 2],
    /// An evaluator on a second backend that runs the imaginary half's EvalMod beside the
    /// real half's ([`Bootstrapper::with_side_evaluator`]).
    side: Option<Evaluator<B>>,
}

impl<B: KeySwitchBackend> Bootstrapper<B> {
    /// Builds the full-slot bootstrapping of `ctx` for `config`: encodes the CoeffToSlot
    /// matrices at levels `L, L−1, …` and the SlotToCoeff matrices below EvalMod.
    ///
    /// Errors ([`Error::Bootstrap`]): stage levels outside `1..=log2(N/2)`, `K` not positive,
    /// a cosine degree below 2, or more levels needed than the chain has.
    pub fn new(ctx: &Context<B>, config: BootstrapConfig) -> Result<Self> {
        Self::with_slots(ctx, config, ctx.params().slots())
    }

    /// Bootstrapping of ciphertexts encoding `slots` values (a power of two up to `N/2`;
    /// sparse packing below `N/2`, the message `m(X) = m'(X^{N/(2n)})`). For `n < N/2`,
    /// CoeffToSlot starts with the sum of the rotations by `n, 2n, …, N/4`
    /// ([`Evaluator::replicate`], no level), which keeps the coefficients at multiples of
    /// `N/(2n)` (times `N/(2n)`) and cancels the others; its last matrix writes the result into
    /// the first `n` of `2n` slots so that the real and imaginary parts share one ciphertext
    /// and **one** EvalMod; SlotToCoeff's first matrix reads them back as `re + i·im`.
    ///
    /// Errors as [`Bootstrapper::new`], and a bad slot count; stage levels must lie in
    /// `1..=max(1, log2 n)`.
    pub fn with_slots(ctx: &Context<B>, config: BootstrapConfig, slots: usize) -> Result<Self> {
        Self::from_plan(ctx, BootstrapPlan::new(ctx.params(), config, slots)?)
    }

    /// Encodes a plan's matrices for `ctx` (whose parameters the plan was made for).
    pub fn from_plan(ctx: &Context<B>, plan: BootstrapPlan) -> Result<Self> {
        let eval = Evaluator::new(ctx)?;
        let encode = |m: &plan::Matrix| {
            LinearTransform::with_options(&eval, &m.diagonals, m.slots, m.level, m.scale, None)
        };
        let cts = plan.cts.iter().map(encode).collect::<Result<Vec<_>>>()?;
        let stc = plan.stc.iter().map(encode).collect::<Result<Vec<_>>>()?;
        let stc_first = plan
            .stc_first
            .iter()
            .map(encode)
            .collect::<Result<Vec<_>>>()?;
        let top = ctx.params().max_level();
        let cts_out = top - plan.levels.coeff_to_slot;
        let stc_in = cts_out - plan.levels.eval_mod;
        let monomials = [monomial(ctx, cts_out, true)?, monomial(ctx, stc_in, false)?];
        Ok(Bootstrapper {
            eval,
            config: plan.config,
            slots: plan.slots,
            sparse: plan.is_sparse(),
            sub_sum: plan.sub_sum_steps(),
            levels: plan.levels,
            cts,
            stc,
            stc_first,
            cosine: plan.cosine,
            plan: plan.cosine_plan,
            arcsine: plan.arcsine,
            monomials,
            side: None,
        })
    }

    /// Runs the two EvalMod halves of a full-slot bootstrap side by side: the imaginary half
    /// on `side`, an evaluator of the same parameters on a second backend (on a GPU: a second
    /// stream of the same device, [`fhe_math::backend::RingBackend`]'s buffers readable from
    /// both), in a second host thread, so that each half's short launches fill the other's
    /// idle multiprocessors (H200, `BOOT_N16_MIXED`: both halves 20.0 → 18.3 ms at 63ad4a2).
    /// The results are the same words: the halves are independent. The hand-over
    /// synchronizes: this backend before the side one reads its half, the side one before its
    /// result is copied back ([`Bootstrapper::eval_mod_all`]). A side evaluator on this
    /// backend itself (a clone, one stream) is correct but gains nothing.
    ///
    /// Errors ([`Error::Bootstrap`]): `side` was made for other parameters.
    pub fn with_side_evaluator(mut self, side: Evaluator<B>) -> Result<Self> {
        let own = self.eval.encoder().context().params().fingerprint();
        if side.encoder().context().params().fingerprint() != own {
            return Err(bad(
                "the side evaluator was made for other parameters than the bootstrapper's",
            ));
        }
        self.side = Some(side);
        Ok(self)
    }

    /// The configuration.
    pub fn config(&self) -> &BootstrapConfig {
        &self.config
    }

    /// The slot count `n` this bootstrapper refreshes.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// Levels consumed by each stage and the output level.
    pub fn levels(&self) -> BootstrapLevels {
        self.levels
    }

    /// The evaluator the bootstrapper computes with.
    pub fn evaluator(&self) -> &Evaluator<B> {
        &self.eval
    }

    /// The rotation steps (rotation sum, CoeffToSlot, SlotToCoeff), reduced modulo `N/2` and
    /// sorted (conjugation not included).
    pub fn rotation_steps(&self) -> Vec<i64> {
        let full = self.eval.encoder().max_slots() as i64;
        let mut steps: Vec<i64> = self.sub_sum.clone();
        for lt in self.transforms() {
            steps.extend(lt.rotation_steps());
        }
        let mut steps: Vec<i64> = steps.into_iter().map(|s| s.rem_euclid(full)).collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// Galois elements whose keys [`Bootstrapper::bootstrap`] needs: the rotations of the DFT
    /// matrices and conjugation.
    pub fn galois_elements(&self) -> Vec<u64> {
        self.eval.galois_elements(&self.rotation_steps(), true)
    }

    /// Bytes of the encoded DFT plaintexts (host or device memory of the backend).
    pub fn plaintext_bytes(&self) -> usize {
        self.transforms()
            .map(LinearTransform::plaintext_bytes)
            .sum()
    }

    /// Bytes of the rotation (Galois) keys [`Bootstrapper::galois_elements`] asks for, as held
    /// in memory (host or device): per key `dnum` digits × 2 polynomials × `(L + 1 + K)` limbs
    /// × `N` words of 8 bytes. Their serialized form stores each `a` half as a seed, so about
    /// half of this crosses the wire.
    pub fn rotation_key_bytes(&self) -> usize {
        let p = self.eval.encoder().context().params();
        self.galois_elements().len()
            * switching_key_bytes(p.dnum(), p.moduli_q().len() + p.moduli_p().len(), p.n())
    }

    /// Key switches of one bootstrap, by stage: (CoeffToSlot with the conjugation, EvalMod's
    /// relinearizations for both halves, SlotToCoeff).
    pub fn key_switches(&self) -> (usize, usize, usize) {
        let cts: usize = self.cts.iter().map(LinearTransform::key_switches).sum();
        let stc: usize = (self.stc.iter().chain(&self.stc_first))
            .map(LinearTransform::key_switches)
            .sum();
        let arcsine = if self.arcsine.is_some() { 2 } else { 0 };
        let halves = self.halves();
        let em = halves * (self.plan.multiplications() + self.config.double_angle + arcsine);
        // Sparse: the rotation sum and the rotation joining the halves.
        let extra = if self.is_sparse() {
            self.sub_sum.len() + 1
        } else {
            0
        };
        (cts + 1 + extra, em, stc)
    }

    /// Ciphertexts EvalMod runs on: 2 for full slots (real, imaginary), 1 for sparse slots.
    fn halves(&self) -> usize {
        if self.is_sparse() { 1 } else { 2 }
    }

    /// ModRaise: `ct` (2 components, any level, its ladder scale, else
    /// [`Error::ScaleMismatch`]) brought to level 0 by
    /// [`Evaluator::drop_to_level`], then its centred residues modulo `q_0` lifted to every
    /// prime of the chain: a ciphertext at level `L` decrypting to `m + q_0·I`, declared at
    /// scale `Δ_L` (its slots are the decoding of `m + q_0·I` at that scale). Built from
    /// existing backend operations: each component's centred residues modulo `q_0` (`N` words,
    /// [`fhe_math::backend::RingBackend::download_centered_q0`]) cross to the host and back
    /// through [`fhe_math::backend::RingBackend::upload_lifted_i64`].
    pub fn mod_raise(&self, ct: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mod_raise_with(ct, None)
    }

    /// [`Bootstrapper::mod_raise`] with sparse-secret encapsulation when `keys` are given: at
    /// level 0 the ciphertext is switched to the sparse ephemeral secret, raised, and switched
    /// back to the main secret at level `L` ([`encapsulation`]).
    pub fn mod_raise_with(
        &self,
        ct: &Ciphertext<B>,
        keys: Option<&EncapsulationKeys<B>>,
    ) -> Result<Ciphertext<B>> {
        let be = self.be();
        let params = self.eval.encoder().context().params();
        if ct.components(be) != 2 {
            return Err(bad(
                "the input must have 2 components (relinearize it first)",
            ));
        }
        let mut low = if ct.level() > 0 {
            self.eval.drop_to_level(ct, 0)?
        } else {
            ct.duplicate(be)?
        };
        let delta0 = params.scale(0)?;
        if ((low.scale() - delta0) / delta0).abs() > 2.0 * crate::evaluator::SCALE_TOLERANCE {
            return Err(Error::ScaleMismatch {
                op: "bootstrap",
                left: low.scale(),
                right: delta0,
            });
        }
        low.set_form(be, true)?;
        if let Some(k) = keys {
            low = k.to_sparse(be, &low)?;
        }
        low.set_form(be, false)?;
        let top = params.max_level();
        let mut raised = be.zeros(Shape {
            components: 2,
            level: top,
            extended: false,
        })?;
        let mut single = be.zeros(Shape {
            components: 1,
            level: 0,
            extended: false,
        })?;
        for c in 0..2 {
            // The centred residues mod q_0 of component c: N words cross, not the buffer.
            be.copy_component(low.poly(), c, &mut single, 0)?;
            let centred: Vec<i64> = be
                .download_centered_q0(&single)?
                .into_iter()
                .map(|v| v.ok_or_else(|| bad("a level-0 residue was not centred")))
                .collect::<Result<_>>()?;
            let lifted = be.upload_lifted_i64(&centred, top)?;
            be.copy_component(&lifted, 0, &mut raised, c)?;
        }
        let meta = Meta::new(top, params.scale(top)?, false, params.fingerprint());
        let mut out = Ciphertext::new(be, raised, meta)?;
        out.set_form(be, true)?;
        match keys {
            Some(k) => k.to_dense(be, &out),
            None => Ok(out),
        }
    }

    /// CoeffToSlot on a raised ciphertext (level `L`): for sparse slots the rotation sum, then
    /// the inverse DFT matrices and the split into real and imaginary parts by conjugation.
    /// Full slots: `[re, im]`, each with slots `P_k/(q_0·K)` in bit-reversed order; sparse
    /// slots: one ciphertext with `re` in the first `n` and `im` in the next `n` of every `2n`
    /// slots. At level `L − cts_levels`.
    pub fn coeff_to_slot(
        &self,
        ct: &Ciphertext<B>,
        keys: &GaloisKeys<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let summed;
        let input = if self.is_sparse() {
            summed = self.eval.replicate(ct, self.slots, keys)?;
            &summed
        } else {
            ct
        };
        let mut x = self.apply_all(input, &self.cts, keys)?;
        let conj = self.eval.conjugate(&x, keys)?;
        let re = self.eval.add(&x, &conj)?;
        self.eval.sub_assign(&mut x, &conj)?;
        let im = self.times_monomial(&x, true)?;
        if self.is_sparse() {
            // [re, 0] + rot([im, 0], −n) = [re, im] (period 2n: −n ≡ n).
            let moved = self.eval.rotate(&im, self.slots as i64, keys)?;
            Ok(vec![self.eval.add(&re, &moved)?])
        } else {
            Ok(vec![re, im])
        }
    }

    /// EvalMod on one half: slots `y = x/K` with `x = I + t`, `|t|` small, to
    /// `sin(2πx) ≈ 2π·t` (with the arcsine correction: `≈ t`), consuming
    /// [`BootstrapLevels::eval_mod`] levels.
    pub fn eval_mod(&self, y: &Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        self.eval_mod_on(&self.eval, y, rlk)
    }

    /// EvalMod on each of CoeffToSlot's outputs, in order: with a side evaluator
    /// ([`Bootstrapper::with_side_evaluator`]) and two halves, the second on the side backend
    /// beside the first; otherwise one after the other.
    pub fn eval_mod_all(
        &self,
        halves: &[Ciphertext<B>],
        rlk: &RelinKey<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let (Some(side), [re, im]) = (&self.side, halves) else {
            return halves.iter().map(|h| self.eval_mod(h, rlk)).collect();
        };
        let be = self.be();
        // The side backend reads `im` (and the relinearization key) from this one's buffers.
        be.synchronize()?;
        let (re, im) = std::thread::scope(|scope| {
            let other = scope.spawn(|| -> Result<Ciphertext<B>> {
                let out = self.eval_mod_on(side, im, rlk);
                // Drained on every path: nothing of the side stream may still read `im`.
                let drained = side.encoder().context().backend().synchronize();
                let out = out?;
                drained?;
                Ok(out)
            });
            let re = self.eval_mod_on(&self.eval, re, rlk);
            let im = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (re, im)
        });
        let (re, im) = (re?, im?);
        // The side result copied onto this backend, and the copy finished before the side
        // buffer is freed.
        let im_here = im.duplicate(be)?;
        be.synchronize()?;
        drop(im);
        Ok(vec![re, im_here])
    }

    fn eval_mod_on(
        &self,
        eval: &Evaluator<B>,
        y: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let (mut c, _) = eval.evaluate_polynomials_with_plan(
            y,
            std::slice::from_ref(&self.cosine),
            &self.plan,
            rlk,
        )?;
        let mut c = c.remove(0);
        let be = eval.encoder().context().backend();
        for _ in 0..self.config.double_angle {
            let sq = eval.mul_relin_rescale(&c, &c, rlk)?;
            let mut d = eval.mul_int(&sq, 2)?;
            let minus_one = crate::poly_eval::residues(be, d.level(), -1.0, d.scale())?;
            d.modify(be, d.meta(), |p| be.add_scalar_assign(p, 0, &minus_one))?;
            c = d;
        }
        if let Some(p) = &self.arcsine {
            c = eval.evaluate_polynomial(&c, p, rlk)?;
        }
        Ok(c)
    }

    /// SlotToCoeff on EvalMod's outputs (as [`Bootstrapper::coeff_to_slot`] returned them):
    /// `re + i·im` through the forward DFT matrices, to the slots of the message (for sparse
    /// slots the first matrix reads the halves as `re + i·im`).
    ///
    /// Errors ([`Error::Bootstrap`]): a number of halves other than CoeffToSlot's.
    pub fn slot_to_coeff(
        &self,
        halves: &[Ciphertext<B>],
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        if halves.len() != self.halves() {
            return Err(bad(format!(
                "SlotToCoeff takes {} ciphertexts, {} given",
                self.halves(),
                halves.len()
            )));
        }
        let x = match halves {
            [re, im] => {
                let i_im = self.times_monomial(im, false)?;
                self.eval.add(re, &i_im)?
            }
            [both] => both.duplicate(self.be())?,
            _ => unreachable!("checked above"),
        };
        self.apply_all(&x, &self.stc, keys)
    }

    /// The whole bootstrap: [`Bootstrapper::mod_raise`], [`Bootstrapper::coeff_to_slot`],
    /// [`Bootstrapper::eval_mod`] on each half (two for full slots, one for sparse), [`Bootstrapper::slot_to_coeff`]. The result
    /// encrypts the input's slots at level [`BootstrapLevels::output_level`] with its ladder
    /// scale. The slots must be small: `|z_j| ≤ 1` (the message ratio `q_0/Δ_0` is spent on
    /// EvalMod's sine). The secret must be sparse enough that `|I_k| < K`
    /// (`rlwe::KeyGenerator::sparse_secret_key_from_seed`); a dense main secret needs
    /// [`Bootstrapper::bootstrap_encapsulated`].
    pub fn bootstrap(
        &self,
        ct: &Ciphertext<B>,
        rlk: &RelinKey<B>,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        self.bootstrap_with(ct, rlk, keys, None)
    }

    /// [`Bootstrapper::bootstrap`] for a dense main secret with sparse-secret encapsulation
    /// ([`EncapsulationKeys`]; [`Bootstrapper::mod_raise_with`]): two more key switches.
    pub fn bootstrap_encapsulated(
        &self,
        ct: &Ciphertext<B>,
        rlk: &RelinKey<B>,
        keys: &GaloisKeys<B>,
        encapsulation: &EncapsulationKeys<B>,
    ) -> Result<Ciphertext<B>> {
        self.bootstrap_with(ct, rlk, keys, Some(encapsulation))
    }

    fn bootstrap_with(
        &self,
        ct: &Ciphertext<B>,
        rlk: &RelinKey<B>,
        keys: &GaloisKeys<B>,
        encapsulation: Option<&EncapsulationKeys<B>>,
    ) -> Result<Ciphertext<B>> {
        let coefficients;
        let ct = if self.stc_first.is_empty() {
            ct
        } else {
            coefficients = self.slot_to_coeff_first(ct, keys)?;
            &coefficients
        };
        let raised = self.mod_raise_with(ct, encapsulation)?;
        let halves = self.coeff_to_slot(&raised, keys)?;
        let modded = self.eval_mod_all(&halves, rlk)?;
        self.slot_to_coeff(&modded, keys)
    }

    /// SlotToCoeff first ([`BootstrapConfig::slot_to_coeff_first`]): `ct`, dropped to
    /// [`BootstrapLevels::input_level`], through SlotToCoeff's matrices to level 0, where its
    /// message coefficients are its slots (`Δ_0·u_{bitrev(k)}`).
    ///
    /// Errors ([`Error::Bootstrap`]): `ct` below the input level.
    pub fn slot_to_coeff_first(
        &self,
        ct: &Ciphertext<B>,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let level = self.levels.input_level;
        if ct.level() < level {
            return Err(bad(format!(
                "SlotToCoeff first needs the input at level {level} or above, not {}",
                ct.level()
            )));
        }
        let input = if ct.level() > level {
            self.eval.drop_to_level(ct, level)?
        } else {
            ct.duplicate(self.be())?
        };
        self.apply_all(&input, &self.stc_first, keys)
    }

    /// Every DFT matrix: CoeffToSlot's, then SlotToCoeff's (after EvalMod, and before ModRaise
    /// when SlotToCoeff runs first).
    fn transforms(&self) -> impl Iterator<Item = &LinearTransform<B>> {
        self.cts.iter().chain(&self.stc).chain(&self.stc_first)
    }

    fn be(&self) -> &B {
        self.eval.encoder().context().backend()
    }

    fn apply_all(
        &self,
        ct: &Ciphertext<B>,
        lts: &[LinearTransform<B>],
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let mut x = self.eval.linear_transform(ct, &lts[0], keys)?;
        for lt in &lts[1..] {
            x = self.eval.linear_transform(&x, lt, keys)?;
        }
        Ok(x)
    }

    /// `ct · (±i)` exactly, as the monomial `±X^{N/2}` (`ζ_j^{N/2} = i` at every slot point):
    /// `negative` gives `−i`. No level, no scale change. The bootstrap's own levels use the
    /// plaintexts encoded at construction.
    fn times_monomial(&self, ct: &Ciphertext<B>, negative: bool) -> Result<Ciphertext<B>> {
        let cached = &self.monomials[usize::from(!negative)];
        if cached.level() == ct.level() {
            return self.eval.mul_plain(ct, cached);
        }
        let pt = monomial(self.eval.encoder().context(), ct.level(), negative)?;
        self.eval.mul_plain(ct, &pt)
    }
}

/// The plaintext `±X^{N/2}` (`−` when `negative`) at `level`, NTT form, scale 1: the
/// multiplication by `±i` in every slot.
fn monomial<B: KeySwitchBackend>(
    ctx: &Context<B>,
    level: usize,
    negative: bool,
) -> Result<Plaintext<B>> {
    let be = ctx.backend();
    let params = ctx.params();
    let n = params.n();
    let mut mono = vec![0i64; n];
    mono[n / 2] = if negative { -1 } else { 1 };
    let mut poly = be.upload_lifted_i64(&mono, level)?;
    be.ntt(&mut poly)?;
    Ok(Plaintext::new(
        be,
        poly,
        Meta::new(level, 1.0, true, params.fingerprint()),
    )?)
}

/// Bytes of one switching key in memory: `dnum · 2 · limbs · N · 8`.
pub fn switching_key_bytes(dnum: usize, limbs: usize, n: usize) -> usize {
    dnum * 2 * limbs * n * 8
}

#[cfg(test)]
mod tests;
