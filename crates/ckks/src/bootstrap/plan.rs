//! [`BootstrapPlan`]: everything bootstrapping computes on the host before encoding — the
//! stage levels, the DFT matrices with their levels and slot counts, the EvalMod polynomials —
//! and the memory it will take (plaintexts, rotation keys), without a backend.

use super::{BootstrapConfig, BootstrapLevels, bad, dft, eval_mod};
use crate::error::Result;
use crate::linear_transform::{planned_bsgs, planned_rotation_steps};
use crate::params::Parameters;
use crate::poly_eval::{Basis, PolyPlan, Polynomial};

/// One DFT matrix: its diagonals, the slot count it acts on, the level it is encoded at and
/// its plaintext scale ([`Parameters::landing_scale`]: `Δ_level`, except at a mixed chain's
/// ladder step, where the rescale lands on the lower ladder).
pub(crate) struct Matrix {
    pub(crate) diagonals: dft::Diagonals,
    pub(crate) slots: usize,
    pub(crate) level: usize,
    pub(crate) scale: f64,
}

/// The host side of a bootstrap for one parameter set, configuration and slot count.
pub struct BootstrapPlan {
    pub(crate) config: BootstrapConfig,
    pub(crate) slots: usize,
    pub(crate) full_slots: usize,
    pub(crate) n: usize,
    pub(crate) levels: BootstrapLevels,
    pub(crate) cts: Vec<Matrix>,
    /// After EvalMod: SlotToCoeff's matrices, or (SlotToCoeff first) the one landing matrix.
    pub(crate) stc: Vec<Matrix>,
    /// Before ModRaise (SlotToCoeff first): SlotToCoeff's matrices at the input's levels.
    pub(crate) stc_first: Vec<Matrix>,
    pub(crate) cosine: Polynomial,
    pub(crate) cosine_plan: PolyPlan,
    pub(crate) arcsine: Option<Polynomial>,
    dnum: usize,
    limbs: usize,
    /// Digits active at each level.
    digits_at: Vec<usize>,
    /// The key-switching digits (ranges of ciphertext primes).
    digits: Vec<std::ops::Range<usize>>,
    special: usize,
}

/// What the stage cost models share: the top level, EvalMod's input and output levels, the
/// EvalMod halves (2 for full slots) and the non-scalar products of one half.
struct StageShape {
    top: usize,
    halves: usize,
    em_top: usize,
    em_out: usize,
    products: usize,
}

/// One cost model of [`BootstrapPlan::stage_costs`]: the cost of a key switch at a level, of a
/// DFT matrix, of one EvalMod product, and of ModRaise.
struct StageCosts<'a> {
    key_switch: &'a dyn Fn(usize) -> usize,
    matrix: &'a dyn Fn(&Matrix) -> usize,
    product: usize,
    mod_raise: usize,
}

/// A bootstrap's cost by stage: the bytes it must read ([`BootstrapPlan::stage_bytes`]: keys
/// and plaintexts, ciphertexts left out; the floor of each stage on a device of given bandwidth
/// is `bytes / bandwidth`) or its key switches' NTT limbs ([`BootstrapPlan::ntt_limbs`], a
/// model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageBytes {
    /// ModRaise with encapsulation: the key back to the dense secret at level `L` (the level-0
    /// key is negligible).
    pub mod_raise: usize,
    /// CoeffToSlot: the rotation keys at each matrix's levels, the conjugation key, the
    /// plaintext diagonals.
    pub coeff_to_slot: usize,
    /// EvalMod (all halves): the relinearization key per product, each product counted at the
    /// lowest level it can run at (a lower bound).
    pub eval_mod: usize,
    /// SlotToCoeff: rotation keys and plaintext diagonals.
    pub slot_to_coeff: usize,
}

impl BootstrapPlan {
    /// The plan for `slots` slots (a power of two up to `N/2`).
    ///
    /// Errors ([`crate::Error::Bootstrap`]): a bad slot count, stage levels outside
    /// `1..=max(1, log2 slots)`, `K` not positive, a cosine degree below 2, more levels needed
    /// than the chain has.
    pub fn new(params: &Parameters, config: BootstrapConfig, slots: usize) -> Result<Self> {
        if !slots.is_power_of_two() || slots > params.slots() {
            return Err(bad(format!(
                "{slots} slots is not a power of two up to {}",
                params.slots()
            )));
        }
        let sparse = slots < params.slots();
        let gap = params.slots() / slots;
        let log_slots = slots.trailing_zeros() as usize;
        for (what, v) in [
            ("CoeffToSlot", config.cts_levels),
            ("SlotToCoeff", config.stc_levels),
        ] {
            if !(1..=log_slots.max(1)).contains(&v) {
                return Err(bad(format!("{what} levels {v} outside 1..={log_slots}")));
            }
        }
        if !(config.k.is_finite() && config.k > 0.0) || config.cos_degree < 2 {
            return Err(bad(format!(
                "K = {} and cosine degree {} (K > 0 and degree ≥ 2 needed)",
                config.k, config.cos_degree
            )));
        }
        let cosine = eval_mod::scaled_cosine(config.k, config.double_angle, config.cos_degree)?;
        let cosine_plan = PolyPlan::new(cosine.basis(), &[cosine.degree()])?;
        let arcsine = config.arcsine.then(eval_mod::arcsine_cubic).transpose()?;
        let arcsine_depth = arcsine
            .as_ref()
            .map(|p| PolyPlan::new(Basis::Power, &[p.degree()]).map(|pl| pl.depth()))
            .transpose()?
            .unwrap_or(0);
        let eval_mod_levels = cosine_plan.depth() + config.double_angle + arcsine_depth;
        let top = params.max_level();
        let first = config.slot_to_coeff_first;
        if first && sparse {
            return Err(bad("SlotToCoeff first needs full slots"));
        }
        // SlotToCoeff first: its matrices below the input level, one landing matrix after
        // EvalMod; the input at level stc_levels.
        let after = if first { 1 } else { config.stc_levels };
        let input_level = if first { config.stc_levels } else { 0 };
        let needed = config.cts_levels + eval_mod_levels + after;
        if needed + input_level > top {
            return Err(bad(format!(
                "it needs {} levels, the chain has {top}",
                needed + input_level
            )));
        }
        let stc_top = top - config.cts_levels - eval_mod_levels;
        if let Some(step) = params.ladder_step().filter(|&s| s > stc_top) {
            return Err(bad(format!(
                "the ladder steps at level {step}, above SlotToCoeff's input level {stc_top}: \
                 EvalMod's products would leave the ladder"
            )));
        }
        let levels = BootstrapLevels {
            input_level,
            coeff_to_slot: config.cts_levels,
            eval_mod: eval_mod_levels,
            slot_to_coeff: config.stc_levels,
            output_level: top - needed,
        };
        let q0 = params.moduli_q()[0] as f64;
        // CoeffToSlot: the raised ciphertext's slots are the decoding of P at scale Δ_L; the
        // matrices take them to bitrev(w(P))/(2·q_0·K). Sparse slots: the rotation sum
        // multiplies the kept coefficients by the gap.
        let cts_constant = params.scale(top)? / (2.0 * q0 * config.k * gap as f64);
        let mut cts_d = dft::coeff_to_slot(slots, config.cts_levels, cts_constant);
        let mut cts_slots = vec![slots; cts_d.len()];
        if sparse {
            let last = cts_d.len() - 1;
            cts_d[last] = dft::masked_to_first_half(&cts_d[last], slots);
            cts_slots[last] = 2 * slots;
        }
        let cts = matrices(params, cts_d, cts_slots, top)?;
        // SlotToCoeff: sin(2π·w(m)/q_0)·(q_0/(2π·Δ_0)) ≈ w(m)/Δ_0 (without the 2π after the
        // arcsine), whose decoding is z.
        let delta0 = params.scale(0)?;
        let stc_constant = if config.arcsine {
            q0 / delta0
        } else {
            q0 / (std::f64::consts::TAU * delta0)
        };
        let (stc, stc_first) = if first {
            // The input's slots u become message coefficients Δ_0·u_{bitrev(k)}, which
            // CoeffToSlot reads back in slot order; EvalMod's t = Δ_0·u/q_0 lands times
            // q_0/Δ_0.
            let landing = dft::Diagonals::from([(0, vec![stc_constant.into(); slots])]);
            (
                matrices(params, vec![landing], vec![slots], stc_top)?,
                matrices(
                    params,
                    dft::slot_to_coeff(slots, config.stc_levels, 1.0),
                    vec![slots; config.stc_levels],
                    input_level,
                )?,
            )
        } else {
            let mut stc_d = dft::slot_to_coeff(slots, config.stc_levels, stc_constant);
            let mut stc_slots = vec![slots; stc_d.len()];
            if sparse {
                stc_d[0] = dft::merged_halves(&stc_d[0], slots);
                stc_slots[0] = 2 * slots;
            }
            (matrices(params, stc_d, stc_slots, stc_top)?, Vec::new())
        };
        Ok(BootstrapPlan {
            config,
            slots,
            full_slots: params.slots(),
            n: params.n(),
            levels,
            cts,
            stc,
            stc_first,
            cosine,
            cosine_plan,
            arcsine,
            dnum: params.dnum(),
            limbs: params.moduli_q().len() + params.moduli_p().len(),
            digits_at: (0..=top)
                .map(|l| params.digits().iter().filter(|d| d.start <= l).count())
                .collect(),
            digits: params.digits(),
            special: params.moduli_p().len(),
        })
    }

    /// Bytes a key switch at `level` reads from its key: `2 · digits · (level + 1 + K) · N · 8`.
    fn key_read(&self, level: usize) -> usize {
        2 * self.digits_at[level] * (level + 1 + self.special) * self.n * 8
    }

    /// Key and plaintext bytes of one matrix: hoisted baby rotations at its level, giant-step
    /// key products one level lower (after the rescale), the diagonals.
    fn matrix_bytes(&self, m: &Matrix) -> usize {
        let idx: Vec<i64> = m.diagonals.keys().copied().collect();
        let (babies, giants) = planned_bsgs(&idx, m.slots);
        let keys = babies.len() * self.key_read(m.level)
            + giants.len() * self.key_read(m.level.saturating_sub(1));
        keys + m.diagonals.len() * (m.level + 1) * self.n * 8
    }

    /// NTT limbs (one length-`N` NTT or inverse NTT on one prime) of a key switch's `mod_up`
    /// at `level` (model): the input's inverse NTT (`l + 1` limbs) and, per active digit `D`,
    /// the forward NTTs of its base conversion to the other `l + 1 + K − |D|` limbs.
    fn mod_up_ntt(&self, level: usize) -> usize {
        let limbs = level + 1;
        let up: usize = self
            .digits
            .iter()
            .filter(|d| d.start <= level)
            .map(|d| limbs + self.special - (d.end.min(limbs) - d.start))
            .sum();
        limbs + up
    }

    /// NTT limbs of a `mod_down` at `level` (model): the two components' `P` parts back to
    /// coefficients (`2K`) and their corrections forward (`2(l + 1)`).
    fn mod_down_ntt(&self, level: usize) -> usize {
        2 * self.special + 2 * (level + 1)
    }

    /// NTT limbs of one key switch at `level`: a `mod_up` and a `mod_down`.
    fn key_switch_ntt(&self, level: usize) -> usize {
        self.mod_up_ntt(level) + self.mod_down_ntt(level)
    }

    /// NTT limbs of one matrix: the babies' shared `mod_up` and a `mod_down` each at its level,
    /// a `mod_up` per giant step and their shared `mod_down` one level lower.
    fn matrix_ntt(&self, m: &Matrix) -> usize {
        let idx: Vec<i64> = m.diagonals.keys().copied().collect();
        let (babies, giants) = planned_bsgs(&idx, m.slots);
        let below = m.level.saturating_sub(1);
        let baby = if babies.is_empty() {
            0
        } else {
            self.mod_up_ntt(m.level) + babies.len() * self.mod_down_ntt(m.level)
        };
        let giant = if giants.is_empty() {
            0
        } else {
            giants.len() * self.mod_up_ntt(below) + self.mod_down_ntt(below)
        };
        baby + giant
    }

    /// A **model** of the NTT work of one bootstrap's key switches, by stage, in NTT limbs
    /// (one length-`N` transform on one prime; rescales and plaintext products left out): per
    /// key switch at level `l` with `d` active digits `(l + 1) + Σ_D (l + 1 + K − |D|) + 2K +
    /// 2(l + 1)`; hoisted babies share a `mod_up`, giant steps share a `mod_down`; EvalMod's
    /// products at the mean of the cost at its input level and at its lowest product level;
    /// with `encapsulated`, ModRaise's two key switches (levels 0 and `L`). For comparing chain
    /// shapes (e.g. [`crate::params::BOOT_N16_MIXED`] against [`crate::params::BOOT_N16`]),
    /// not a measurement.
    pub fn ntt_limbs(&self, encapsulated: bool) -> StageBytes {
        let StageShape {
            top,
            em_top,
            em_out,
            ..
        } = self.stage_shape();
        self.stage_costs(StageCosts {
            key_switch: &|l| self.key_switch_ntt(l),
            matrix: &|m| self.matrix_ntt(m),
            product: (self.key_switch_ntt(em_top) + self.key_switch_ntt(em_out + 1)) / 2,
            mod_raise: if encapsulated {
                self.key_switch_ntt(0) + self.key_switch_ntt(top)
            } else {
                0
            },
        })
    }

    /// A stage table from one cost model: the sparse rotation sum and the DFT matrices by
    /// `key_switch` and `matrix`, EvalMod's products at `product` each, ModRaise at `mod_raise`.
    fn stage_costs(&self, c: StageCosts<'_>) -> StageBytes {
        let StageShape {
            top,
            halves,
            em_top,
            products,
            ..
        } = self.stage_shape();
        let sub_sum = self.sub_sum_steps().len() * (c.key_switch)(top);
        let extra = if self.is_sparse() { 1 } else { 0 };
        StageBytes {
            mod_raise: c.mod_raise,
            coeff_to_slot: sub_sum
                + self.cts.iter().map(c.matrix).sum::<usize>()
                + (1 + extra) * (c.key_switch)(em_top),
            eval_mod: halves * products * c.product,
            slot_to_coeff: self.slot_to_coeff_matrices().map(c.matrix).sum(),
        }
    }

    /// SlotToCoeff's matrices wherever they run: after EvalMod, and (SlotToCoeff first) before
    /// ModRaise.
    fn slot_to_coeff_matrices(&self) -> impl Iterator<Item = &Matrix> {
        self.stc.iter().chain(&self.stc_first)
    }

    /// Every DFT matrix of the plan.
    fn all_matrices(&self) -> impl Iterator<Item = &Matrix> {
        self.cts.iter().chain(self.slot_to_coeff_matrices())
    }

    /// The levels and counts [`BootstrapPlan::ntt_limbs`] and [`BootstrapPlan::stage_bytes`]
    /// both cost from.
    fn stage_shape(&self) -> StageShape {
        let top = self.cts.first().map_or(0, |m| m.level);
        let em_top = top - self.levels.coeff_to_slot;
        let arcsine = if self.arcsine.is_some() { 2 } else { 0 };
        StageShape {
            top,
            halves: if self.is_sparse() { 1 } else { 2 },
            em_top,
            em_out: em_top - self.levels.eval_mod,
            products: self.cosine_plan.multiplications() + self.config.double_angle + arcsine,
        }
    }

    /// The bytes each stage must read ([`StageBytes`]), for a memory-bound floor.
    pub fn stage_bytes(&self, encapsulated: bool) -> StageBytes {
        let StageShape { top, em_out, .. } = self.stage_shape();
        // A relinearization key has one digit pair per active digit, like a rotation key.
        self.stage_costs(StageCosts {
            key_switch: &|l| self.key_read(l),
            matrix: &|m| self.matrix_bytes(m),
            product: self.key_read(em_out + 1),
            mod_raise: if encapsulated { self.key_read(top) } else { 0 },
        })
    }

    /// Levels consumed by each stage and the output level.
    pub fn levels(&self) -> BootstrapLevels {
        self.levels
    }

    /// Whether the slot count is below `N/2` (sparse packing).
    pub fn is_sparse(&self) -> bool {
        self.slots < self.full_slots
    }

    /// The rotation steps of the sparse-slot rotation sum (`n, 2n, …, N/4`; none for full
    /// slots); the step `n` also joins the real and imaginary halves.
    pub fn sub_sum_steps(&self) -> Vec<i64> {
        std::iter::successors(Some(self.slots), |&s| Some(2 * s))
            .take_while(|&s| s < self.full_slots)
            .map(|s| s as i64)
            .collect()
    }

    /// Every rotation step a bootstrap applies (rotation sum, CoeffToSlot, SlotToCoeff),
    /// sorted; conjugation comes on top.
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps = self.sub_sum_steps();
        for m in self.all_matrices() {
            let idx: Vec<i64> = m.diagonals.keys().copied().collect();
            steps.extend(planned_rotation_steps(&idx, m.slots));
        }
        let full = self.full_slots as i64;
        let mut steps: Vec<i64> = steps.into_iter().map(|s| s.rem_euclid(full)).collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// Rotation keys a bootstrap needs: one per rotation step, plus conjugation.
    pub fn rotation_key_count(&self) -> usize {
        self.rotation_steps().len() + 1
    }

    /// Bytes of those keys in memory (host or device):
    /// [`super::switching_key_bytes`] each.
    pub fn rotation_key_bytes(&self) -> usize {
        self.rotation_key_count() * super::switching_key_bytes(self.dnum, self.limbs, self.n)
    }

    /// Plaintext diagonals of the DFT matrices.
    pub fn diagonal_count(&self) -> usize {
        self.all_matrices().map(|m| m.diagonals.len()).sum()
    }

    /// Bytes of the encoded diagonals: `Σ (level + 1) · N · 8` over the matrices' diagonals.
    pub fn plaintext_bytes(&self) -> usize {
        self.all_matrices()
            .map(|m| m.diagonals.len() * (m.level + 1) * self.n * 8)
            .sum()
    }
}

/// One stage's matrices, the first at `top` and each next one a level lower, each encoded at
/// the plaintext scale that lands its product on the ladder (`Parameters::landing_scale`).
fn matrices(
    params: &Parameters,
    diagonals: Vec<dft::Diagonals>,
    slots: Vec<usize>,
    top: usize,
) -> Result<Vec<Matrix>> {
    diagonals
        .into_iter()
        .zip(slots)
        .enumerate()
        .map(|(i, (diagonals, slots))| {
            Ok(Matrix {
                diagonals,
                slots,
                level: top - i,
                scale: params.landing_scale(top - i)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::{BOOT_N12_CONFIG, BOOT_N16_CONFIG};
    use crate::params::{BOOT_N12_INSECURE, BOOT_N16};

    /// The N = 2^16 preset's plan: 9 levels of 56 bits left, 128-bit secure, and its key and
    /// plaintext memory (printed for the records).
    #[test]
    fn n16_plan_leaves_nine_levels() {
        let params = Parameters::new(&BOOT_N16).unwrap();
        assert!(params.log2_qp() <= 1772.0);
        let plan = BootstrapPlan::new(&params, BOOT_N16_CONFIG, params.slots()).unwrap();
        assert_eq!(
            plan.levels(),
            BootstrapLevels {
                input_level: 0,
                coeff_to_slot: 4,
                eval_mod: 9,
                slot_to_coeff: 3,
                output_level: 9,
            }
        );
        for l in 0..=9 {
            assert!(params.moduli_q()[l] > 1 << 56);
        }
        let bytes = plan.stage_bytes(true);
        println!(
            "BOOT_N16: log2 QP {:.1}, {} rotation keys, {:.2} GB of rotation keys, {} diagonals, \
             {:.2} GB of plaintexts; bytes read per stage {bytes:?}",
            params.log2_qp(),
            plan.rotation_key_count(),
            plan.rotation_key_bytes() as f64 / 1e9,
            plan.diagonal_count(),
            plan.plaintext_bytes() as f64 / 1e9
        );
        // Every stage reads something; CoeffToSlot reads at least its plaintexts.
        assert!(bytes.coeff_to_slot > plan.cts.iter().map(|m| m.diagonals.len()).sum::<usize>());
        assert!(bytes.eval_mod > 0 && bytes.slot_to_coeff > 0 && bytes.mod_raise > 0);
        assert!(plan.rotation_key_count() < 80);
    }

    /// The mixed N = 2^16 preset's plan: the same 16 levels as `BOOT_N16`, 9 levels of at
    /// least 40 (here 45) bits left, 128-bit secure, SlotToCoeff's last matrix at the ladder
    /// step with the landing scale; and the modelled NTT work of its key switches against
    /// `BOOT_N16`'s (printed for the records; a model, not a measurement).
    #[test]
    fn n16_mixed_plan_leaves_nine_levels_of_45_bits() {
        use crate::bootstrap::BOOT_N16_MIXED_CONFIG;
        use crate::params::BOOT_N16_MIXED;
        let params = Parameters::new(&BOOT_N16_MIXED).unwrap();
        let bound = fhe_math::security::max_log_qp_128(16).unwrap();
        assert_eq!(bound, 1772.0);
        assert!(params.log2_qp() <= bound);
        let plan = BootstrapPlan::new(&params, BOOT_N16_MIXED_CONFIG, params.slots()).unwrap();
        assert_eq!(
            plan.levels(),
            BootstrapLevels {
                input_level: 0,
                coeff_to_slot: 4,
                eval_mod: 9,
                slot_to_coeff: 3,
                output_level: 9,
            }
        );
        for l in 1..=9 {
            assert!(params.moduli_q()[l] > 1 << 44, "q_{l}");
            assert!(params.scale(l).unwrap() > 2f64.powi(40));
        }
        for l in 10..=25 {
            assert!(params.moduli_q()[l] > 1 << 56, "q_{l}");
        }
        assert_eq!(params.ladder_step(), Some(10));
        let last = plan.stc.last().unwrap();
        assert_eq!(last.level, 10);
        assert_eq!(last.scale, params.landing_scale(10).unwrap());
        let landed = params.scale(10).unwrap() * last.scale / params.moduli_q()[10] as f64;
        assert!((landed / params.scale(9).unwrap() - 1.0).abs() < 1e-12);
        for m in plan.cts.iter().chain(&plan.stc[..2]) {
            assert_eq!(m.scale, params.scale(m.level).unwrap());
        }
        // q_0/Δ_0 as at BOOT_N16 (2^3): the same EvalMod.
        let ratio = |p: &Parameters| (p.moduli_q()[0] as f64 / p.scale(0).unwrap()).log2();
        let base = Parameters::new(&BOOT_N16).unwrap();
        assert!((ratio(&params) - ratio(&base)).abs() < 0.05);
        let base_plan = BootstrapPlan::new(&base, BOOT_N16_CONFIG, base.slots()).unwrap();
        let total = |c: StageBytes| c.mod_raise + c.coeff_to_slot + c.eval_mod + c.slot_to_coeff;
        let (mixed, old) = (plan.ntt_limbs(true), base_plan.ntt_limbs(true));
        let ks = |p: &BootstrapPlan, l| p.key_switch_ntt(l);
        println!(
            "NTT limbs per bootstrap (model): BOOT_N16 {} {old:?}, BOOT_N16_MIXED {} {mixed:?}, \
             ratio {:.3}; one key switch at EvalMod's input level 21: {} against {}; \
             log2 QP {:.2}, {} rotation keys, {:.2} GB of rotation keys (BOOT_N16 {:.2} GB)",
            total(old),
            total(mixed),
            total(mixed) as f64 / total(old) as f64,
            ks(&plan, 21),
            ks(&base_plan, 21),
            params.log2_qp(),
            plan.rotation_key_count(),
            plan.rotation_key_bytes() as f64 / 1e9,
            base_plan.rotation_key_bytes() as f64 / 1e9,
        );
        assert!(total(mixed) < total(old));
        assert!(mixed.eval_mod < old.eval_mod);
        assert_eq!(plan.rotation_steps(), base_plan.rotation_steps());
    }

    /// A ladder step above SlotToCoeff's input is refused: EvalMod's products would leave the
    /// ladder.
    #[test]
    fn ladder_step_inside_the_bootstrap_is_an_error() {
        use crate::params::{ApplicationPrimes, BOOT_N12_MIXED_INSECURE, ParametersLiteral};
        let lit = ParametersLiteral {
            application_primes: Some(ApplicationPrimes {
                count: 7,
                scale_bits: 45,
            }),
            ..BOOT_N12_MIXED_INSECURE
        };
        let params = Parameters::new(&lit).unwrap();
        let e = BootstrapPlan::new(&params, BOOT_N12_CONFIG, params.slots())
            .err()
            .expect("accepted");
        assert!(e.to_string().contains("ladder steps at level 8"), "{e}");
    }

    /// The plan's keys are exactly those the encoded bootstrapper asks for.
    #[test]
    fn plan_rotations_match_the_bootstrapper() {
        let params = Parameters::new(&BOOT_N12_INSECURE).unwrap();
        let ctx = crate::Context::cpu(params.clone()).unwrap();
        for slots in [params.slots(), 64] {
            let plan = BootstrapPlan::new(&params, BOOT_N12_CONFIG, slots).unwrap();
            let steps = plan.rotation_steps();
            let boot = crate::Bootstrapper::from_plan(&ctx, plan).unwrap();
            assert_eq!(boot.rotation_steps(), steps, "{slots} slots");
        }
    }
}
