//! The key bundle of scheme switching and its generation.

use ckks::linear_transform::planned_rotation_steps;
use ckks::{Context, Evaluator};
use fhe_math::Modulus;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::Complex64;
use fhe_math::sampler::Seed;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use rlwe::{Ciphertext, GaloisKeys, RelinKey, SecretKey};
use std::collections::BTreeMap;

use super::error::{Error, Result};
use super::params::SwitchParameters;
use super::ring::RingSwitchKey;
use crate::keys::{ClientKey, ServerKey};

/// Every key a switch needs: the ring key-switching key (CKKS secret → subring secret), the
/// PBS server key (bootstrapping key, LWE key switch `N_t → n`), the CKKS encryption of the
/// LWE secret (replicated in the slots) for the way back, the rotation keys of SlotToCoeff and
/// of the way back's linear transform, and the relinearization key of the sine.
pub struct SwitchKeys<B: KeySwitchBackend> {
    pub(crate) params: SwitchParameters,
    pub(crate) slots: usize,
    pub(crate) ckks_fingerprint: u64,
    pub(crate) ring: RingSwitchKey,
    pub(crate) server: ServerKey,
    pub(crate) lwe_key: Ciphertext<B>,
    pub(crate) galois: GaloisKeys<B>,
    pub(crate) relin: RelinKey<B>,
}

/// Bytes of a [`SwitchKeys`] bundle in memory, by key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyBytes {
    /// The ring key-switching key (`l · 2 · N` words).
    pub ring_key: usize,
    /// The PBS bootstrapping key.
    pub bootstrap_key: usize,
    /// The PBS's LWE key-switching key.
    pub lwe_key_switch: usize,
    /// The CKKS encryption of the LWE secret.
    pub lwe_key_ciphertext: usize,
    /// The rotation keys.
    pub rotation_keys: usize,
    /// The relinearization key.
    pub relin_key: usize,
    /// All of the above.
    pub total: usize,
}

/// The layout of the way back for `S` ciphertexts of dimension `n` in a ring of `N/2` slots:
/// `n' = 2^⌈log2 n⌉` columns are split into `groups` groups of `cols` columns, and the
/// `slots = groups · S ≤ N/2` slots hold one (row, group) pair each (slot `g·S + row`), so the
/// transform has only `cols` diagonals; a rotation sum over the groups (steps `S·2^i`) adds
/// the groups up. `groups = min(n', N/(2S))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BackLayout {
    pub np: usize,
    pub cols: usize,
    pub groups: usize,
    pub slots: usize,
}

impl BackLayout {
    pub fn new(params: &SwitchParameters, slots: usize, n: usize) -> Self {
        let np = params.tfhe.lwe_dimension.next_power_of_two();
        let groups = np.min((n / 2) / slots).max(1);
        BackLayout {
            np,
            cols: np / groups,
            groups,
            slots: groups * slots,
        }
    }

    /// The replicated key's slot `i`: the index of the LWE secret coefficient it holds
    /// (`(i / S mod groups) · cols + i mod cols`; at or above `n` means 0).
    pub fn key_index(&self, i: usize, s: usize) -> usize {
        ((i / s) % self.groups) * self.cols + i % self.cols
    }

    /// The rotation steps of the group sum.
    pub fn sum_steps(&self, s: usize) -> Vec<i64> {
        (0..self.groups.trailing_zeros())
            .map(|i| (s << i) as i64)
            .collect()
    }
}

/// Rotation steps of SlotToCoeff (on `S` slots) and of the way back.
pub(crate) fn rotation_steps(params: &SwitchParameters, slots: usize, n: usize) -> Vec<i64> {
    let mut steps = Vec::new();
    for d in ckks::bootstrap::dft::slot_to_coeff_diagonals(slots, params.stc_levels, 1.0) {
        let idx: Vec<i64> = d.keys().copied().collect();
        steps.extend(planned_rotation_steps(&idx, slots));
    }
    let lay = BackLayout::new(params, slots, n);
    let idx: Vec<i64> = (0..lay.cols as i64).collect();
    steps.extend(planned_rotation_steps(&idx, lay.slots));
    steps.extend(lay.sum_steps(slots));
    steps.sort_unstable();
    steps.dedup();
    steps
}

/// Checks a slot count: a power of two in `2..=N/2` with `stc_levels <= log2 S`.
pub(crate) fn check_slots(params: &SwitchParameters, slots: usize, n: usize) -> Result<()> {
    if !slots.is_power_of_two() || slots < 2 || slots > n / 2 {
        return Err(Error::SlotCount {
            op: "build a scheme switch",
            given: slots,
            expected: n / 2,
        });
    }
    if params.stc_levels > slots.trailing_zeros() as usize {
        return Err(Error::InvalidParameters {
            name: params.name,
            reason: format!(
                "{} SlotToCoeff levels for {slots} slots (at most log2 of the slots)",
                params.stc_levels
            ),
        });
    }
    Ok(())
}

/// `q_sw`: the NTT prime (`1 mod 2N`) nearest `2^ring_key_bits`.
pub(crate) fn ring_modulus(params: &SwitchParameters, n: usize) -> Result<Modulus> {
    let two_n = 2 * n as u64;
    Ok(Modulus::new(fhe_math::primes::ntt_prime_nearest(
        1u64 << params.ring_key_bits,
        two_n,
        &[],
    )?)?)
}

/// A seed derived from `seed` for purpose `index` (ChaCha20 stream `0x5357_0000_0000 + index`).
fn derive(seed: &Seed, index: u64) -> Seed {
    let mut rng = ChaCha20Rng::from_seed(seed.0);
    rng.set_stream(0x5357_0000_0000 + index);
    let mut out = [0u8; 32];
    rng.fill_bytes(&mut out);
    Seed(out)
}

/// The CKKS secret's coefficients (centred mod `q_0`).
fn ckks_secret<B: KeySwitchBackend>(ctx: &Context<B>, sk: &SecretKey<B>) -> Result<Vec<i64>> {
    let be = ctx.backend();
    let mut p = be.duplicate(sk.poly())?;
    be.intt(&mut p)?;
    let host = be.download(&p)?;
    let q0 = be.ring().modulus(0);
    Ok(host.limb(0, 0).iter().map(|&x| q0.center(x)).collect())
}

impl<B: KeySwitchBackend> SwitchKeys<B> {
    /// Generates the bundle for switching ciphertexts of `slots` values (a power of two,
    /// `2..=N/2`) of `ctx` (secret `sk`) through the PBS client key `client` (of
    /// `params.tfhe`), every key from `seed` (sub-seeds derived per key, so two backends given
    /// the same seed hold the same keys).
    pub fn generate(
        ctx: &Context<B>,
        sk: &SecretKey<B>,
        client: &ClientKey,
        params: &SwitchParameters,
        slots: usize,
        seed: &Seed,
    ) -> Result<Self> {
        let cp = ctx.params();
        params.validate(cp.n(), cp.max_level())?;
        check_slots(params, slots, cp.n())?;
        if client.params().fingerprint() != params.tfhe.fingerprint() {
            return Err(Error::Mismatch {
                what: format!("the client key is not of {}", params.tfhe.name),
            });
        }
        if sk.fingerprint() != cp.fingerprint() {
            return Err(Error::Mismatch {
                what: "the CKKS secret key is of another context".into(),
            });
        }
        let be = ctx.backend();
        let q_sw = ring_modulus(params, cp.n())?;
        let s = ckks_secret(ctx, sk)?;
        let ring = RingSwitchKey::generate(
            &s,
            client.glwe_key().coefficients(),
            q_sw,
            params.ring_key_gadget,
            params.ring_key_noise_bound,
            &derive(seed, 0),
        )?;
        let server = client.server_key(&derive(seed, 1))?;

        // The LWE secret in the way back's layout, at `output_level + levels_back`.
        let eval = Evaluator::new(ctx)?;
        let lay = BackLayout::new(params, slots, cp.n());
        let s_lwe = client.lwe_key().coefficients();
        let values: Vec<f64> = (0..lay.slots)
            .map(|i| {
                s_lwe
                    .get(lay.key_index(i, slots))
                    .map_or(0.0, |&v| v as f64)
            })
            .collect();
        let values: Vec<Complex64> = values.into_iter().map(|v| Complex64::new(v, 0.0)).collect();
        let top = params.output_level + params.levels_back()?;
        let pt = eval
            .encoder()
            .encode_with(&values, top, cp.scale(top)?, lay.slots)?;
        let lwe_key = ctx.encrypt_sk_with_seeds(sk, &pt, derive(seed, 2), &derive(seed, 3))?;

        let kg = ctx.key_generator();
        let relin = kg.relin_key_with_seeds(sk, derive(seed, 4), &derive(seed, 5))?;
        let elements = eval.galois_elements(&rotation_steps(params, slots, cp.n()), false);
        let mut keys = BTreeMap::new();
        for (i, &g) in elements.iter().enumerate() {
            let k = 6 + 2 * i as u64;
            keys.insert(
                g,
                kg.galois_key_with_seeds(sk, g, derive(seed, k), &derive(seed, k + 1))?,
            );
        }
        let galois = GaloisKeys {
            keys,
            fingerprint: cp.fingerprint(),
        };
        let _ = be;
        Ok(SwitchKeys {
            params: *params,
            slots,
            ckks_fingerprint: cp.fingerprint(),
            ring,
            server,
            lwe_key,
            galois,
            relin,
        })
    }

    /// The switching parameters.
    pub fn params(&self) -> &SwitchParameters {
        &self.params
    }

    /// The slot count the keys were made for.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The PBS server key.
    pub fn server_key(&self) -> &ServerKey {
        &self.server
    }

    /// Bytes of every key in memory (host or device), from the CKKS ring's shape.
    pub fn bytes(&self, ctx: &Context<B>) -> KeyBytes {
        let p = ctx.params();
        let limbs = p.moduli_q().len() + p.moduli_p().len();
        let switching = ckks::bootstrap::switching_key_bytes(p.dnum(), limbs, p.n());
        let ring_key = self.ring.bytes();
        let bootstrap_key = self.server.bootstrap_key().data.len() * 8;
        let lwe_key_switch = self.server.key_switch_key().data.len() * 8;
        let lwe_key_ciphertext = 2 * p.moduli_q().len() * p.n() * 8;
        let rotation_keys = self.galois.keys.len() * switching;
        let relin_key = switching;
        KeyBytes {
            ring_key,
            bootstrap_key,
            lwe_key_switch,
            lwe_key_ciphertext,
            rotation_keys,
            relin_key,
            total: ring_key
                + bootstrap_key
                + lwe_key_switch
                + lwe_key_ciphertext
                + rotation_keys
                + relin_key,
        }
    }
}
