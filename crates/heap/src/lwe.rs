//! The LWE side: extraction of level-0 coefficients as LWE samples over the integers, the
//! switch from the virtual modulus `M = K'·q_0` to `q_ks = 2^k`, the key switch modulo `q_ks`
//! from the sparse ring secret (dimension `N`) to the binary LWE secret `s_t` (dimension `n_t`),
//! and the switch to `2N`. LWE phase convention `b − ⟨a, s⟩` (as `tfhe-switch`).

use crate::error::Result;
use crate::params::HeapParams;
use fhe_math::backend::blind_rotate::{
    BlindRotateBackend, ExtractionEntries, Gadget, KeySwitchKeyHost, KeySwitchParams, LweBatchHost,
};
use fhe_math::backend::rns_blind_rotate::RnsRotationBatch;
use fhe_math::modulus::Modulus;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;

/// An LWE sample modulo a power of two `2^k ≤ 2^32`: `(a, b)`, phase `b − ⟨a, s⟩ mod 2^k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LweSample {
    /// The mask.
    pub a: Vec<u32>,
    /// The body.
    pub b: u32,
}

/// `round(v·2^k / M) mod 2^k` for an integer `v` (round half up), `M = k_prime·q0`.
pub fn switch_from_virtual(v: i64, k: u32, m: i128) -> u32 {
    let num = (v as i128) << k;
    let r = (2 * num + m).div_euclid(2 * m);
    (r.rem_euclid(1i128 << k)) as u32
}

/// The LWE sample of coefficient `k` of the centred level-0 ciphertext `(c0, c1)` (phase
/// `c0 + c1·s'`), entries kept as centred integers so that `b − ⟨a, s'⟩ = Φ_k` over `Z`, then
/// switched from `M = K'·q_0` to `2^log_q_ks`: `a_j = −c1_{k−j}` (`j ≤ k`),
/// `a_j = c1_{N+k−j}` (`j > k`), `b = c0_k`.
pub fn extract_switched(
    params: &HeapParams,
    q0: u64,
    c0: &[i64],
    c1: &[i64],
    k: usize,
) -> Result<LweSample> {
    SwitchedEntries::new(params, q0, c0, c1)?.sample(k)
}

/// The switched entries of a centred level-0 ciphertext, each computed once: every sample of
/// [`extract_switched`] is a signed rotation of `c1`, so its entries are read from `±c1`
/// switched (the rounding is not odd-symmetric, hence both signs). Held as the backends'
/// [`ExtractionEntries`] (`[c1 | −c1 | c0]` switched, modulo `2^log_q_ks`).
#[derive(Clone, Debug)]
pub struct SwitchedEntries {
    entries: ExtractionEntries,
}

impl SwitchedEntries {
    /// The switched `c1`, `−c1` and `c0` (see [`extract_switched`]).
    pub fn new(params: &HeapParams, q0: u64, c0: &[i64], c1: &[i64]) -> Result<Self> {
        let m = params.k_prime as i128 * q0 as i128;
        let kb = params.log_q_ks;
        let sw = |v: i64| u64::from(switch_from_virtual(v, kb, m));
        let words = c1
            .iter()
            .map(|&v| sw(v))
            .chain(c1.iter().map(|&v| sw(-v)))
            .chain(c0.iter().map(|&v| sw(v)))
            .collect();
        Ok(SwitchedEntries {
            entries: ExtractionEntries {
                dimension: c1.len(),
                modulus: Modulus::new(1u64 << kb)?,
                words,
            },
        })
    }

    /// The entries as the backends take them.
    pub fn entries(&self) -> &ExtractionEntries {
        &self.entries
    }

    /// The sample of coefficient `k < N`, the words of [`extract_switched`] (an error for
    /// `k ≥ N`).
    pub fn sample(&self, k: usize) -> Result<LweSample> {
        let n = self.entries.dimension;
        let mut w = vec![0u64; n + 1];
        self.entries.sample_into(k, &mut w)?;
        Ok(LweSample {
            a: w[..n].iter().map(|&v| v as u32).collect(),
            b: w[n] as u32,
        })
    }
}

/// The LWE key-switching key `KSK[i][l] = LWE_{s_t}(s'_i · 2^{k − b·(l+1)})` modulo `2^k`, noise
/// uniform in `[−B, B]`, masks uniform, all from a ChaCha20 stream of `seed`. Laid out
/// `[i][l][0..n_t]` masks then body at `n_t`.
#[derive(Clone, Debug)]
pub struct LweKeySwitchKey {
    /// `N · levels · (n_t + 1)` words.
    pub words: Vec<u32>,
    n_in: usize,
    n_t: usize,
}

fn mask(k: u32) -> u32 {
    if k == 32 { u32::MAX } else { (1u32 << k) - 1 }
}

impl LweKeySwitchKey {
    /// A key from its words (`N · levels · (n_t + 1)` of them; the caller checks the count).
    pub(crate) fn from_words(words: Vec<u32>, n_in: usize, n_t: usize) -> Self {
        LweKeySwitchKey { words, n_in, n_t }
    }

    /// The key from the input secret `s_in` (entries in `{−1, 0, 1}`) to the binary `s_t`.
    pub fn generate(params: &HeapParams, s_in: &[i64], s_t: &[u32], seed: [u8; 32]) -> Self {
        let (n_in, n_t, lv) = (s_in.len(), s_t.len(), params.ks_levels);
        let (k, b) = (params.log_q_ks, params.ks_base_log);
        let bound = params.lwe_noise_bound as u64;
        let stride = n_t + 1;
        let mut words = vec![0u32; n_in * lv * stride];
        words
            .par_chunks_mut(lv * stride)
            .enumerate()
            .for_each(|(i, rows)| {
                let mut rng = ChaCha20Rng::from_seed(seed);
                rng.set_stream(i as u64);
                for l in 0..lv {
                    let row = &mut rows[l * stride..(l + 1) * stride];
                    let mut dot = 0u32;
                    for (t, w) in row[..n_t].iter_mut().enumerate() {
                        *w = rng.next_u32() & mask(k);
                        dot = dot.wrapping_add(w.wrapping_mul(s_t[t]));
                    }
                    let e = (rng.next_u64() % (2 * bound + 1)) as i64 - bound as i64;
                    let shift = k - b * (l as u32 + 1);
                    let msg = (s_in[i] as i32 as u32).wrapping_shl(shift);
                    row[n_t] = dot.wrapping_add(e as i32 as u32).wrapping_add(msg) & mask(k);
                }
            });
        LweKeySwitchKey { words, n_in, n_t }
    }

    /// The LWE dimension of the output.
    pub fn output_dimension(&self) -> usize {
        self.n_t
    }

    /// The key in the blind-rotation backend's form ([`KeySwitchKeyHost`]): modulus `2^k`,
    /// gadget of `levels` digits of base `2^b` (gadget value `j` is `2^{k − b·j}`, row
    /// `i·levels + j − 1` the same words as `KSK[i][j − 1]`), so the backend's key switch
    /// `(0, b) − Σ d_{i,j}·row` with signed digits of `a_i` rounded to its top `b·levels` bits
    /// is this key's.
    pub fn to_host_key(&self, params: &HeapParams) -> Result<KeySwitchKeyHost> {
        let key = KeySwitchKeyHost {
            params: KeySwitchParams {
                input_dimension: self.n_in,
                output_dimension: self.n_t,
                modulus: Modulus::new(1u64 << params.log_q_ks)?,
                gadget: Gadget {
                    base_log: params.ks_base_log,
                    levels: params.ks_levels as u32,
                },
            },
            data: self.words.iter().map(|&w| u64::from(w)).collect(),
        };
        key.check()?;
        Ok(key)
    }
}

/// The LWE key switch of every sample of `xs` (dimension `N`, mod `2^k`) to `s_t` on `be`
/// with its uploaded key ([`LweKeySwitchKey::to_host_key`]): `(0, b) − Σ_{i,l} d_{i,l}·KSK[i][l]`,
/// `d_{i,l}` the signed base-`2^b` digits of `a_i` rounded to its top `b·levels` bits; the
/// phase under `s_t` is `b − ⟨a, s'⟩` plus the key's noise and the rounding.
pub fn key_switch_batch<B: BlindRotateBackend>(
    be: &B,
    key: &B::KeySwitchKey,
    params: &HeapParams,
    xs: &[LweSample],
) -> Result<Vec<LweSample>> {
    let n = params.n();
    let modulus = Modulus::new(1u64 << params.log_q_ks)?;
    let mut data = Vec::with_capacity(xs.len() * (n + 1));
    for x in xs {
        data.extend(x.a.iter().map(|&w| u64::from(w)));
        data.push(u64::from(x.b));
    }
    let batch = LweBatchHost {
        dimension: n,
        modulus,
        data,
    };
    let switched = BlindRotateBackend::key_switch(be, key, &be.upload_lwe_batch(&batch)?)?;
    let out = be.download_lwe_batch(&switched)?;
    let n_t = out.dimension;
    Ok(out
        .data
        .chunks(n_t + 1)
        .map(|w| LweSample {
            a: w[..n_t].iter().map(|&v| v as u32).collect(),
            b: w[n_t] as u32,
        })
        .collect())
}

/// `round(w·2N / 2^k) mod 2N` (round half up) for a word `w < 2^k`, `2N < 2^k`.
fn word_to_2n(w: u64, k: u32, two_n: u64) -> u64 {
    let shift = k - two_n.trailing_zeros();
    ((w + (1u64 << (shift - 1))) >> shift) % two_n
}

/// `round(x·2N / 2^k) mod 2N` (round half up) of every entry.
pub fn switch_to_2n(x: &LweSample, k: u32, two_n: u64) -> (Vec<u64>, u64) {
    let f = |w: u32| word_to_2n(u64::from(w), k, two_n);
    (x.a.iter().map(|&w| f(w)).collect(), f(x.b))
}

/// The blind-rotation batch of the coefficients `coeffs` of `entries` on `be`: their samples
/// extracted and key-switched to `s_t` by the backend
/// ([`BlindRotateBackend::key_switch_extracted`] with the uploaded key), then every word
/// switched to `2N` as [`switch_to_2n`] does (on host threads when `parallel`).
pub fn rotation_batch<B: BlindRotateBackend>(
    be: &B,
    key: &B::KeySwitchKey,
    params: &HeapParams,
    entries: &SwitchedEntries,
    coeffs: &[usize],
    parallel: bool,
) -> Result<RnsRotationBatch> {
    let switched = be.key_switch_extracted(key, entries.entries(), coeffs)?;
    let out = be.download_lwe_batch(&switched)?;
    let (n_t, k, two_n) = (out.dimension, params.log_q_ks, 2 * params.n() as u64);
    let mut a = vec![0u64; coeffs.len() * n_t];
    let mut b = vec![0u64; coeffs.len()];
    let switch = |((a, b), w): ((&mut [u64], &mut u64), &[u64])| {
        for (x, &v) in a.iter_mut().zip(&w[..n_t]) {
            *x = word_to_2n(v, k, two_n);
        }
        *b = word_to_2n(w[n_t], k, two_n);
    };
    if parallel {
        a.par_chunks_mut(n_t)
            .zip(b.par_iter_mut())
            .zip(out.data.par_chunks(n_t + 1))
            .for_each(switch);
    } else {
        a.chunks_mut(n_t)
            .zip(b.iter_mut())
            .zip(out.data.chunks(n_t + 1))
            .for_each(switch);
    }
    Ok(RnsRotationBatch {
        dimension: n_t,
        a,
        b,
    })
}

/// Entry `y ∈ [0, N)` of the staircase test polynomial divided by `u`:
/// `round(y·K'/2N)` for `y < N/2`, `−round((y − N)·K'/2N)` above (round half up).
pub fn staircase_entry(y: i64, n: i64, k_prime: i64) -> i64 {
    let f = |x: i64| (x * k_prime + n).div_euclid(2 * n);
    if y < n / 2 { f(y) } else { -f(y - n) }
}

/// What the blind rotation returns (divided by `u`) for the phase `x̃ ∈ [0, 2N)`: the
/// constant coefficient of `X^{−x̃}·v`, i.e. `v_{x̃}` below `N` and `−v_{x̃−N}` above.
pub fn staircase_reading(x_tilde: i64, n: i64, k_prime: i64) -> i64 {
    if x_tilde < n {
        staircase_entry(x_tilde, n, k_prime)
    } else {
        -staircase_entry(x_tilde - n, n, k_prime)
    }
}

/// The phase `b − ⟨a, s⟩ mod 2^k` (tests and noise measurements).
pub fn phase(x: &LweSample, s: &[i64], k: u32) -> u32 {
    let mut p = x.b;
    for (&a, &si) in x.a.iter().zip(s) {
        p = p.wrapping_sub(a.wrapping_mul(si as i32 as u32));
    }
    p & mask(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{HEAP_N10_INSECURE, HeapParams};

    /// The key switch written out from its definition: `a_i` rounded to its top `b·levels`
    /// bits (half up), signed base-`2^b` digits from the least significant (a digit of `2^b/2`
    /// or more becomes negative and carries), `(0, b) − Σ d_{i,l}·KSK[i][l]` wrapping mod 2^32,
    /// then mod `2^k`.
    fn switch_by_definition(key: &LweKeySwitchKey, p: &HeapParams, x: &LweSample) -> LweSample {
        let (k, b, lv) = (p.log_q_ks, p.ks_base_log, p.ks_levels);
        let stride = key.n_t + 1;
        let drop = k - b * lv as u32;
        let mut out = vec![0u32; stride];
        out[key.n_t] = x.b;
        for (i, &ai) in x.a.iter().enumerate() {
            let mut v = (u64::from(ai) + (1u64 << drop >> 1)) >> drop;
            for l in (0..lv).rev() {
                let mut d = (v & ((1 << b) - 1)) as i64;
                v >>= b;
                if d >= 1 << (b - 1) {
                    d -= 1 << b;
                    v += 1;
                }
                let row = &key.words[(i * lv + l) * stride..(i * lv + l + 1) * stride];
                for (o, &w) in out.iter_mut().zip(row) {
                    *o = o.wrapping_sub((d as i32 as u32).wrapping_mul(w));
                }
            }
        }
        LweSample {
            a: out[..key.n_t].iter().map(|w| w & mask(k)).collect(),
            b: out[key.n_t] & mask(k),
        }
    }

    /// A CPU backend of a one-limb ring of 16 coefficients: the LWE key switch ignores the
    /// ring.
    fn small_cpu_backend() -> fhe_math::cpu::CpuBackend {
        fhe_math::cpu::CpuBackend::new(
            fhe_math::ring::RingContext::new(
                16,
                &fhe_math::primes::ntt_primes(30, 32, 1, &[]).unwrap(),
                &fhe_math::primes::ntt_primes(31, 32, 1, &[]).unwrap(),
                std::iter::once(0..1).collect(),
            )
            .unwrap(),
        )
    }

    /// The backend's key switch ([`key_switch_batch`] with [`LweKeySwitchKey::to_host_key`])
    /// gives the words of the definition, at the CI set and at `HEAP_N13`'s gadget.
    #[test]
    fn backend_key_switch_is_the_definition() {
        for p in [HEAP_N10_INSECURE, crate::params::HEAP_N13] {
            let mut rng = ChaCha20Rng::from_seed([9; 32]);
            let n = 64;
            let s_in: Vec<i64> = (0..n).map(|i| [0, 1, -1, 0][i % 4]).collect();
            let s_t: Vec<u32> = (0..16).map(|_| rng.next_u32() & 1).collect();
            let key = LweKeySwitchKey::generate(&p, &s_in, &s_t, [4; 32]);
            let be = small_cpu_backend();
            let uploaded = be
                .upload_key_switch_key(&key.to_host_key(&p).unwrap())
                .unwrap();
            let m = mask(p.log_q_ks);
            let xs: Vec<LweSample> = (0..20)
                .map(|_| LweSample {
                    a: (0..n).map(|_| rng.next_u32() & m).collect(),
                    b: rng.next_u32() & m,
                })
                .collect();
            let mut small = p.clone();
            small.ckks.log_n = 6;
            let got = key_switch_batch(&be, &uploaded, &small, &xs).unwrap();
            for (x, g) in xs.iter().zip(&got) {
                assert_eq!(*g, switch_by_definition(&key, &p, x), "{}", p.name);
            }
        }
    }

    /// [`rotation_batch`] (extraction and key switch in one backend call, then the switch to
    /// `2N`) gives, sample by sample, the words of the per-sample path (`extract_switched`,
    /// `key_switch_batch`, `switch_to_2n`), on host threads and in one, with repeats and both
    /// ends of the ring.
    #[test]
    fn rotation_batch_is_the_per_sample_path() {
        let p = HEAP_N10_INSECURE;
        let n = p.n();
        let q0: u64 = (1u64 << 40) + 0x1d001;
        let mut rng = ChaCha20Rng::from_seed([8; 32]);
        let s_in: Vec<i64> = (0..n).map(|i| [0, 1, -1, 0, 0][i % 5]).collect();
        let s_t: Vec<u32> = (0..p.lwe_dimension).map(|_| rng.next_u32() & 1).collect();
        let ksk = LweKeySwitchKey::generate(&p, &s_in, &s_t, [6; 32]);
        let be = small_cpu_backend();
        let key = be
            .upload_key_switch_key(&ksk.to_host_key(&p).unwrap())
            .unwrap();
        let half = (q0 / 2) as i64;
        let mut centred = || (rng.next_u64() % q0) as i64 - half;
        let c0: Vec<i64> = (0..n).map(|_| centred()).collect();
        let c1: Vec<i64> = (0..n).map(|_| centred()).collect();
        let entries = SwitchedEntries::new(&p, q0, &c0, &c1).unwrap();
        let coeffs = [0, 7, n - 1, 7, 512];
        let two_n = 2 * n as u64;
        for parallel in [true, false] {
            let batch = rotation_batch(&be, &key, &p, &entries, &coeffs, parallel).unwrap();
            assert_eq!(batch.len(), coeffs.len());
            for (t, &k) in coeffs.iter().enumerate() {
                let x = extract_switched(&p, q0, &c0, &c1, k).unwrap();
                let ks = key_switch_batch(&be, &key, &p, std::slice::from_ref(&x))
                    .unwrap()
                    .pop()
                    .unwrap();
                let (a, b) = switch_to_2n(&ks, p.log_q_ks, two_n);
                let d = batch.dimension;
                assert_eq!(
                    &batch.a[t * d..(t + 1) * d],
                    &a[..],
                    "mask of coefficient {k}"
                );
                assert_eq!(batch.b[t], b, "body of coefficient {k}");
            }
        }
        assert!(entries.sample(n).is_err(), "a coefficient past N");
    }

    /// For every coefficient of a random level-0 ciphertext under a sparse secret (messages
    /// `|m_k| ≤ q0/16`): `(I_k, the staircase's reading, |x̄ − exact|)` after the
    /// virtual-modulus switch, the key switch and the switch to `2N` at `p`.
    fn readings(p: &HeapParams) -> Vec<(i64, i64, f64)> {
        let n = p.n();
        let q0: u64 = (1u64 << 40) + 0x1d001; // any odd modulus of 41 bits
        let mut rng = ChaCha20Rng::from_seed([3; 32]);
        let mut s = vec![0i64; n];
        let mut placed = 0;
        while placed < p.sparse_weight {
            let j = (rng.next_u64() % n as u64) as usize;
            if s[j] == 0 {
                s[j] = if rng.next_u32() & 1 == 0 { 1 } else { -1 };
                placed += 1;
            }
        }
        let s_t: Vec<u32> = (0..p.lwe_dimension).map(|_| rng.next_u32() & 1).collect();
        let s_t64: Vec<i64> = s_t.iter().map(|&x| x as i64).collect();
        let ksk = LweKeySwitchKey::generate(p, &s, &s_t, [5; 32]);
        let be = small_cpu_backend();
        let key = be
            .upload_key_switch_key(&ksk.to_host_key(p).unwrap())
            .unwrap();
        let half = (q0 / 2) as i64;
        let centred = |rng: &mut ChaCha20Rng| (rng.next_u64() % q0) as i64 - half;
        let c1: Vec<i64> = (0..n).map(|_| centred(&mut rng)).collect();
        // (c1·s')_k over Z, then c0 = [m − c1·s']_{q0} with |m_k| <= q0/16: Φ = m + q0·I.
        let c1s: Vec<i128> = (0..n)
            .map(|k| {
                (0..n)
                    .map(|j| {
                        let v = if j <= k {
                            c1[k - j] as i128
                        } else {
                            -(c1[n + k - j] as i128)
                        };
                        v * s[j] as i128
                    })
                    .sum()
            })
            .collect();
        let m: Vec<i64> = (0..n)
            .map(|_| (rng.next_u64() % (q0 / 8)) as i64 - (q0 / 16) as i64)
            .collect();
        let c0: Vec<i64> = (0..n)
            .map(|k| {
                let v = (m[k] as i128 - c1s[k]).rem_euclid(q0 as i128) as i64;
                if v > half { v - q0 as i64 } else { v }
            })
            .collect();
        let two_n = 2 * n as i64;
        (0..n)
            .map(|k| {
                let phi = c0[k] as i128 + c1s[k];
                let i_k = ((phi - m[k] as i128) / q0 as i128) as i64;
                assert_eq!(phi, m[k] as i128 + i_k as i128 * q0 as i128);
                let x = extract_switched(p, q0, &c0, &c1, k).unwrap();
                let ks = key_switch_batch(&be, &key, p, std::slice::from_ref(&x))
                    .unwrap()
                    .pop()
                    .unwrap();
                let (a, b) = switch_to_2n(&ks, p.log_q_ks, two_n as u64);
                let mut ph = b as i64;
                for (ai, si) in a.iter().zip(&s_t64) {
                    ph -= *ai as i64 * si;
                }
                let x_tilde = ph.rem_euclid(two_n);
                let xbar = if x_tilde >= two_n / 2 {
                    x_tilde - two_n
                } else {
                    x_tilde
                };
                let exact = phi as f64 / q0 as f64 * two_n as f64 / p.k_prime as f64;
                let got = staircase_reading(x_tilde, n as i64, p.k_prime as i64);
                (i_k, got, (xbar as f64 - exact).abs())
            })
            .collect()
    }

    /// Every coefficient's overflow `I_k` is recovered exactly by the staircase's rounding,
    /// and the phase error stays within the model's 11σ.
    #[test]
    fn lwe_side_recovers_the_overflow_of_every_coefficient() {
        let p = HEAP_N10_INSECURE;
        let r = readings(&p);
        for (k, &(i_k, got, _)) in r.iter().enumerate() {
            assert_eq!(got, i_k, "coefficient {k}");
        }
        let largest = r.iter().map(|x| x.0.abs()).max().unwrap_or(0);
        assert!(
            largest >= 2,
            "the test should see overflows, got at most {largest}"
        );
        let worst = r.iter().map(|x| x.2).fold(0.0, f64::max);
        let q0 = (1u64 << 40) + 0x1d001;
        let model = crate::budget::budget(&p, &[q0; 6], 1.0, 1.0, p.n() / 2);
        assert!(
            worst < 11.0 * model.sigma_x,
            "phase error {worst} against sigma {}",
            model.sigma_x
        );
    }

    /// At a deliberately narrow staircase (`K' = 8`: `|I_k| ≤ 1.5` readable) failures happen,
    /// at a rate below the model's bound on `P(|I_k| ≥ K'/4 − ½ − ρ)`.
    #[test]
    fn narrow_staircase_fails_within_the_model() {
        let p = HeapParams {
            k_prime: 8,
            ..HEAP_N10_INSECURE
        };
        let r = readings(&p);
        let failures = r.iter().filter(|x| x.0 != x.1).count();
        let rate = failures as f64 / r.len() as f64;
        let q0 = (1u64 << 40) + 0x1d001;
        // ρ of the test's messages: |m_k| ≤ q0/16.
        let bound = crate::budget::budget(&p, &[q0; 6], q0 as f64 / 16.0 / 2f64.sqrt(), 1.0, 1)
            .log2_failure_per_coefficient;
        println!(
            "K' = 8: {failures} failures in {}, bound 2^{bound:.2}",
            r.len()
        );
        assert!(failures > 0, "a narrow staircase must fail sometimes");
        assert!(
            rate <= 2f64.powf(bound),
            "rate {rate} above the bound 2^{bound}"
        );
    }
}
