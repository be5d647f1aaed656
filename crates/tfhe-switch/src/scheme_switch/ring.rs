//! The ring step of CKKS → LWE, on the host: modulus switching of a level-0 CKKS ciphertext
//! to `q_sw`, key switching from the CKKS secret `s` to the subring secret
//! `s_mid(X) = s_m(X^r)`, modulus switching to the PBS modulus `q_t`, and extraction of LWE
//! ciphertexts of dimension `N_t` under `s_m`.
//!
//! # The subring trick
//!
//! With `r = N_ckks / N_t`, the ring `Z[X]/(X^N + 1)` is the direct sum of
//! `X^j · Z[X^r]/(X^N + 1)`, `j < r`, and `Z[X^r]/(X^N + 1) ≅ Z[Y]/(Y^{N_t} + 1)`. A key
//! `(b_j, a_j) = (−a_j·s_mid + e_j + g_j·s, a_j)` with uniform `a_j` is therefore `r`
//! independent RLWE samples over the `N_t` ring under `s_m` at modulus `q_sw`: its security is
//! that of RLWE at degree `N_t` and modulus `q_sw` (no special prime: a signed gadget
//! decomposition, [`super::params::SwitchParameters::ring_key_gadget`]), checked against the
//! HE standard's bound at `N_t` ([`super::params::SwitchParameters::validate`]).
//!
//! After the switch, coefficient `i` of the phase `c_0 + c_1·s_mid` only involves the
//! `c_1`-coefficients of index `i − r·t` (`t < N_t`, negated when the index wraps below 0), so
//! extracting it gives an LWE of dimension `N_t` under `s_m`: exactly the input of the PBS's
//! key switch to `n`.
//!
//! # Noise (in units of `q_sw`)
//!
//! Modulus switching `q_0 → q_sw` by `round(x·q_sw/q_0)` adds `(1 + ‖s‖)/2` at most per
//! coefficient (standard deviation `√((1 + 2N/3)/12)`); the key switch adds
//! `Σ_j d_j·e_j` (variance `l·N·D(b)·V(B)`, `D(b) = (2^{2b} + 2)/12`, `V(B) = B(B+1)/3`) and
//! the decomposition's dropped part times `s` (`N·(2/3)·q_sw²/(12·2^{2bl})`); switching to
//! `q_t` adds `√((1 + 2N_t/3)/12)` in units of `q_t`. At [`super::params::SWITCH_CLASSIC`]
//! and `N = 2^16` the sum is below `2^21` of `q_sw ≈ 2^50`, i.e. `2^-25` of a message step
//! `q/(2p)`: the switch's noise is negligible next to the PBS's own.
//!
//! Every step is exact integer arithmetic on the host, so every backend gives the same words.

use fhe_math::backend::blind_rotate::{Decomposer, Gadget};
use fhe_math::sampler::{Domain, Seed};
use fhe_math::{Modulus, NttTable};
use rayon::prelude::*;

use super::error::{Error, Result};
use crate::sample::{self, Stream};

/// Object index of the ring key's sampling streams (`KeySwitchA` and `Error`, part = digit).
const RING_KEY_OBJECT: u32 = 0x5357_0000;

/// The ring key-switching key from the CKKS secret to `s_mid`, NTT form mod `q_sw`.
#[derive(Clone, Debug)]
pub struct RingSwitchKey {
    ntt: NttTable,
    gadget: Gadget,
    ratio: usize,
    /// `l` rows of `(b_j, a_j)`, each `2N` residues in NTT form.
    rows: Vec<u64>,
}

/// `s_mid(X) = s_m(X^r)` as `N` signed coefficients.
fn subring_secret(s_m: &[i64], n: usize) -> Vec<i64> {
    let r = n / s_m.len();
    let mut out = vec![0i64; n];
    for (t, &v) in s_m.iter().enumerate() {
        out[r * t] = v;
    }
    out
}

fn to_ntt(ntt: &NttTable, coeffs: &[i64]) -> Vec<u64> {
    let q = ntt.modulus();
    let mut v: Vec<u64> = coeffs.iter().map(|&c| q.reduce_i64(c)).collect();
    ntt.forward(&mut v);
    v
}

impl RingSwitchKey {
    /// The key from `s` (the CKKS secret, `N` signed coefficients) to `s_m(X^r)` (`s_m` the
    /// PBS's GLWE secret of degree `N_t`), modulus `q_sw`, with the randomness of `seed`:
    /// masks on streams `(KeySwitchA, 0x53570000, j)`, noise (uniform in `[−bound, bound]`)
    /// on `(Error, 0x53570000, j)`.
    pub fn generate(
        s: &[i64],
        s_m: &[i64],
        q_sw: Modulus,
        gadget: Gadget,
        noise_bound: u64,
        seed: &Seed,
    ) -> Result<Self> {
        let n = s.len();
        let ntt = NttTable::new(q_sw, n)?;
        let s_ntt = to_ntt(&ntt, s);
        let mid_ntt = to_ntt(&ntt, &subring_secret(s_m, n));
        let g = gadget.values(q_sw.value());
        let q = q_sw;
        let l = gadget.levels as usize;
        let mut rows = vec![0u64; l * 2 * n];
        rows.par_chunks_mut(2 * n).enumerate().for_each(|(j, row)| {
            let (b, a) = row.split_at_mut(n);
            let stream = |domain| Stream {
                domain,
                object: RING_KEY_OBJECT,
                part: j as u16,
            };
            sample::uniform(seed, stream(Domain::KeySwitchA), &q, a);
            sample::noise(seed, stream(Domain::Error), noise_bound, &q, b);
            ntt.forward(a);
            ntt.forward(b);
            for i in 0..n {
                // b = −a·s_mid + e + g_j·s
                let t = q.sub(q.mul(g[j], s_ntt[i]), q.mul(a[i], mid_ntt[i]));
                b[i] = q.add(b[i], t);
            }
        });
        Ok(RingSwitchKey {
            ntt,
            gadget,
            ratio: n / s_m.len(),
            rows,
        })
    }

    /// The key from its parts (as [`Self::gadget`] and [`Self::rows`] give them): `N`,
    /// `q_sw`, the gadget, `r = N / N_t`, and `l · 2 · N` residues below `q_sw`.
    ///
    /// Errors: a ring or ratio the NTT or `N` does not allow, rows of another length or with a
    /// residue not below `q_sw` ([`Error::Mismatch`]).
    pub fn from_parts(
        n: usize,
        q_sw: Modulus,
        gadget: Gadget,
        ratio: usize,
        rows: Vec<u64>,
    ) -> Result<Self> {
        let ntt = NttTable::new(q_sw, n)?;
        gadget.check(&q_sw)?;
        let want = gadget.levels as usize * 2 * n;
        if ratio == 0 || !n.is_multiple_of(ratio) || rows.len() != want {
            return Err(Error::Mismatch {
                what: format!(
                    "ring key of {} residues with ratio {ratio}, expected {want} for N = {n}",
                    rows.len()
                ),
            });
        }
        if rows.iter().any(|&x| x >= q_sw.value()) {
            return Err(Error::Mismatch {
                what: format!("ring key residue not below q_sw = {}", q_sw.value()),
            });
        }
        Ok(RingSwitchKey {
            ntt,
            gadget,
            ratio,
            rows,
        })
    }

    /// The gadget of the key's decomposition.
    pub fn gadget(&self) -> Gadget {
        self.gadget
    }

    /// The `l` rows `(b_j, a_j)`, each `2N` residues in NTT form mod `q_sw`.
    pub fn rows(&self) -> &[u64] {
        &self.rows
    }

    /// The modulus `q_sw`.
    pub fn modulus(&self) -> Modulus {
        *self.ntt.modulus()
    }

    /// The ring degree `N` of the CKKS side.
    pub fn ring_degree(&self) -> usize {
        self.ntt.n()
    }

    /// `r = N / N_t`.
    pub fn ratio(&self) -> usize {
        self.ratio
    }

    /// Bytes of the key in memory (`l · 2 · N` words).
    pub fn bytes(&self) -> usize {
        self.rows.len() * 8
    }

    /// `(c_0, c_1)` (coefficient form mod `q_sw`, phase `c_0 + c_1·s`) switched to
    /// `s_mid`: `(c_0 + Σ_j d_j·b_j, Σ_j d_j·a_j)` with `d_j` the signed digits of `c_1`.
    pub fn switch(&self, c0: &[u64], c1: &[u64]) -> Result<(Vec<u64>, Vec<u64>)> {
        let n = self.ntt.n();
        let q = *self.ntt.modulus();
        let l = self.gadget.levels as usize;
        let dec = Decomposer::new(self.gadget, q)?;
        // Digit polynomials in NTT form, one per level.
        let mut digits = vec![0u64; l * n];
        let mut buf = vec![0i64; l];
        for (i, &x) in c1.iter().enumerate() {
            dec.decompose(x, &mut buf);
            for (j, &d) in buf.iter().enumerate() {
                digits[j * n + i] = q.reduce_i64(d);
            }
        }
        digits.par_chunks_mut(n).for_each(|d| self.ntt.forward(d));
        let mut out: Vec<Vec<u64>> = (0..2)
            .into_par_iter()
            .map(|c| {
                let mut acc = vec![0u64; n];
                for j in 0..l {
                    let key = &self.rows[(2 * j + c) * n..(2 * j + c + 1) * n];
                    let d = &digits[j * n..(j + 1) * n];
                    for ((x, &k), &dv) in acc.iter_mut().zip(key).zip(d) {
                        *x = q.add(*x, q.mul(k, dv));
                    }
                }
                self.ntt.inverse(&mut acc);
                acc
            })
            .collect();
        let a = out.pop().unwrap_or_default();
        let mut b = out.pop().unwrap_or_default();
        for (x, &c) in b.iter_mut().zip(c0) {
            *x = q.add(*x, c);
        }
        Ok((b, a))
    }
}

/// `round-half-up(x · to / from)` of a centred `x` (`|x| < from/2`), as a residue mod `to`.
pub fn switch_centred(x: i64, from: u64, to: u64) -> u64 {
    let num = 2 * i128::from(x) * i128::from(to) + i128::from(from);
    let y = num.div_euclid(2 * i128::from(from));
    y.rem_euclid(i128::from(to)) as u64
}

/// The LWE ciphertext (mask of `N_t` residues then body, phase `b − ⟨a, s_m⟩`) of
/// coefficient `i` of the phase `c_0 + c_1·s_m(X^r)`, residues mod `q`.
pub fn extract(c0: &[u64], c1: &[u64], i: usize, ratio: usize, q: &Modulus) -> Vec<u64> {
    let mut out = vec![0u64; c0.len() / ratio + 1];
    extract_into(c0, c1, i, ratio, q, &mut out);
    out
}

/// [`extract`] written into `out` (`N_t + 1` residues).
pub fn extract_into(c0: &[u64], c1: &[u64], i: usize, ratio: usize, q: &Modulus, out: &mut [u64]) {
    let n = c0.len();
    let nt = n / ratio;
    for (t, a) in out[..nt].iter_mut().enumerate() {
        let shift = ratio * t;
        // phase_i gets +c1[i − r t] s_m[t] (or −c1[i − r t + N] when the index wraps);
        // a_t = −(that coefficient).
        *a = if shift <= i {
            q.neg(c1[i - shift])
        } else {
            c1[i + n - shift]
        };
    }
    out[nt] = c0[i];
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    /// Host negacyclic product for the reference.
    fn negacyclic(a: &[i64], b: &[i64], q: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for i in 0..n {
            for j in 0..n {
                let v = q.mul(q.reduce_i64(a[i]), q.reduce_i64(b[j]));
                let k = i + j;
                if k < n {
                    out[k] = q.add(out[k], v);
                } else {
                    out[k - n] = q.sub(out[k - n], v);
                }
            }
        }
        out
    }

    /// Switching then extracting gives, for every coefficient, an LWE whose phase under `s_m`
    /// is the original phase under `s` up to the key-switching noise.
    #[test]
    fn ring_switch_and_extract_keep_the_phase() {
        let n = 64;
        let nt = 16;
        let q_sw =
            Modulus::new(fhe_math::primes::ntt_prime_nearest(1 << 50, 128, &[]).unwrap()).unwrap();
        let seed = Seed([5; 32]);
        let s: Vec<i64> = (0..n).map(|i| [(0), 1, -1][(i * 7 + 3) % 3]).collect();
        let s_m: Vec<i64> = (0..nt).map(|i| [(1), 0, -1][(i * 5 + 1) % 3]).collect();
        let gadget = Gadget {
            base_log: 10,
            levels: 4,
        };
        let key = RingSwitchKey::generate(&s, &s_m, q_sw, gadget, 8, &seed).unwrap();
        let mut c1 = vec![0u64; n];
        sample::uniform(
            &Seed([6; 32]),
            Stream {
                domain: Domain::PublicA,
                object: 0,
                part: 0,
            },
            &q_sw,
            &mut c1,
        );
        let msg: Vec<i64> = (0..n as i64).map(|i| (i - 20) * (1 << 40)).collect();
        // c0 = m − c1·s, so that c0 + c1·s = m.
        let c1s = negacyclic(
            &c1.iter().map(|&x| q_sw.center(x)).collect::<Vec<_>>(),
            &s,
            &q_sw,
        );
        let c0: Vec<u64> = (0..n)
            .map(|i| q_sw.sub(q_sw.reduce_i64(msg[i]), c1s[i]))
            .collect();
        let (d0, d1) = key.switch(&c0, &c1).unwrap();
        for i in 0..n {
            let lwe = extract(&d0, &d1, i, n / nt, &q_sw);
            let mut phase = lwe[nt];
            for t in 0..nt {
                phase = q_sw.sub(phase, q_sw.mul(lwe[t], q_sw.reduce_i64(s_m[t])));
            }
            let err = q_sw.center(q_sw.sub(phase, q_sw.reduce_i64(msg[i])));
            assert!(err.abs() < 1 << 24, "coefficient {i}: error {err}");
        }
    }

    #[test]
    fn centred_switch_rounds() {
        assert_eq!(switch_centred(10, 100, 10), 1);
        assert_eq!(switch_centred(-10, 100, 10), 9);
        assert_eq!(switch_centred(15, 100, 10), 2);
        assert_eq!(switch_centred(-15, 100, 10), 9);
    }
}
