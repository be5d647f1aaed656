//! The evaluation keys of HEAP bootstrapping, generated from the CKKS secret key.

use crate::error::{Error, Result};
use crate::gadget::{GadgetRows, RnsGadget, RowMessage, encrypt_rows};
use crate::lwe::LweKeySwitchKey;
use crate::params::HeapParams;
use ckks::Context;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::blind_rotate::BlindRotateBackend;
use fhe_math::backend::rns_blind_rotate::KEYS_PER_PAIR;
use fhe_math::sampler::Seed;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use rlwe::{SecretKey, SwitchingKey};
use zeroize::Zeroizing;

/// Every key HEAP bootstrapping needs: `to_sparse` (hybrid, over `q_0·P` only), the LWE
/// key-switching key, the RGSW encryptions of the unrolled bits of `s_t` (three a pair of
/// coefficients, [`unrolled_bits`]; 3 RNS digits × 2 components each), the `log2 N` automorphism keys `τ_{2^l+1}` and `to_dense` (gadget form at `Q_BR`).
pub struct HeapKeys<B: KeySwitchBackend + BlindRotateBackend> {
    pub(crate) to_sparse: SwitchingKey<B>,
    pub(crate) lwe_ksk: LweKeySwitchKey,
    /// `lwe_ksk` in the backend's memory ([`LweKeySwitchKey::to_host_key`]).
    pub(crate) lwe_ksk_uploaded: B::KeySwitchKey,
    /// `[p·3 + k][c]`: the rows decomposing component `c`, encrypting the bit `μ_{p,k}` of
    /// [`unrolled_bits`].
    pub(crate) rgsw: Vec<[GadgetRows<B>; 2]>,
    /// `(g, rows)` for `g = 2^l + 1`, `l = 1..=log2 N`.
    pub(crate) auto: Vec<(usize, GadgetRows<B>)>,
    pub(crate) to_dense: GadgetRows<B>,
    pub(crate) fingerprint: u64,
    /// Identifies the key set (FNV-1a of public LWE key-switching words): bootstrappers
    /// sharing one bootstrap must hold the same keys.
    pub(crate) key_id: u64,
}

/// The centred integer coefficients of a secret key (limb 0 of its coefficient form).
pub(crate) fn secret_coefficients<B: KeySwitchBackend>(
    be: &B,
    sk: &SecretKey<B>,
) -> Result<Zeroizing<Vec<i64>>> {
    let mut p = be.duplicate(sk.poly())?;
    be.intt(&mut p)?;
    let mut host = be.download(&p)?;
    be.zeroize(&mut p);
    let q = be.ring().modulus(0);
    let out = Zeroizing::new(host.limb(0, 0).iter().map(|&w| q.center(w)).collect());
    host.raw_mut().iter_mut().for_each(|w| *w = 0);
    Ok(out)
}

/// `τ_g` of an integer polynomial (`X ↦ X^g`, `g` odd).
pub(crate) fn automorphism_ints(v: &[i64], g: usize) -> Zeroizing<Vec<i64>> {
    let n = v.len();
    let mut out = Zeroizing::new(vec![0i64; n]);
    for (i, &x) in v.iter().enumerate() {
        let j = (i * g) % (2 * n);
        if j < n { out[j] = x } else { out[j - n] = -x }
    }
    out
}

fn seed_from(rng: &mut ChaCha20Rng) -> Seed {
    let mut s = [0u8; 32];
    rng.fill_bytes(&mut s);
    Seed(s)
}

impl<B: KeySwitchBackend + BlindRotateBackend> HeapKeys<B> {
    /// All keys from the dense CKKS secret `sk`, every random choice (the ephemeral sparse
    /// secret, `s_t`, masks and errors) expanded from `seed`: the same seed gives the same key
    /// words on every backend.
    pub fn generate(
        ctx: &Context<B>,
        params: &HeapParams,
        sk: &SecretKey<B>,
        seed: &Seed,
    ) -> Result<Self> {
        params.check()?;
        let be = ctx.backend();
        let fp = ctx.params().fingerprint();
        if sk.fingerprint() != fp {
            return Err(Error::ParameterMismatch {
                op: "generate HEAP keys",
                what: "the secret key",
                got: sk.fingerprint(),
                expected: fp,
            });
        }
        if sk.sparse_weight().is_some() {
            return Err(Error::InvalidOperand {
                op: "generate HEAP keys",
                reason:
                    "the main secret must be the dense ternary key (the sparse one is ephemeral)"
                        .into(),
            });
        }
        let ring = be.ring().clone();
        let top = ring.max_level();
        let gadget = RnsGadget::new(&ring, top, params.digit_limbs)?;
        let mut rng = ChaCha20Rng::from_seed(seed.0);
        let kg = ctx.key_generator();

        // The ephemeral sparse secret and the level-0 key s -> s'.
        let sparse = kg.sparse_secret_key_from_seed(seed_from(&mut rng), params.sparse_weight)?;
        let (a, e) = (seed_from(&mut rng), seed_from(&mut rng));
        let mut to_sparse = kg.switching_key(&sparse, sk.poly(), a, &e)?;
        keep_limbs_up_to(be, &mut to_sparse.poly, 0)?;

        // The LWE side.
        let s_dense = secret_coefficients(be, sk)?;
        let s_sparse = secret_coefficients(be, &sparse)?;
        let s_t: Zeroizing<Vec<u32>> = Zeroizing::new(
            (0..params.lwe_dimension)
                .map(|_| rng.next_u32() & 1)
                .collect(),
        );
        let mut ksk_seed = [0u8; 32];
        rng.fill_bytes(&mut ksk_seed);
        let lwe_ksk = LweKeySwitchKey::generate(params, &s_sparse, &s_t, ksk_seed);

        // The ring keys at Q_BR, under the dense s.
        let lift = |v: &[i64]| -> Result<B::Poly> {
            let mut p = be.upload_lifted_i64(v, top)?;
            be.ntt(&mut p)?;
            Ok(p)
        };
        let s_ntt = lift(&s_dense)?;
        let d = gadget.digits() as u32;
        let rgsw_seed = seed_from(&mut rng);
        let rgsw = unrolled_bits(&s_t)
            .iter()
            .enumerate()
            .map(|(r, &bit)| -> Result<[GadgetRows<B>; 2]> {
                let row = |c: usize| {
                    encrypt_rows(
                        be,
                        &gadget,
                        &s_ntt,
                        RowMessage::Bit(bit),
                        c,
                        &rgsw_seed,
                        (2 * r as u32 + c as u32) * d,
                    )
                };
                Ok([row(0)?, row(1)?])
            })
            .collect::<Result<Vec<_>>>()?;
        let auto_seed = seed_from(&mut rng);
        let mut auto = Vec::new();
        for l in 1..=ring.n().trailing_zeros() {
            let g = (1usize << l) + 1;
            let mut tau = lift(&automorphism_ints(&s_dense, g))?;
            let rows = encrypt_rows(
                be,
                &gadget,
                &s_ntt,
                RowMessage::Poly(&tau),
                0,
                &auto_seed,
                l * d,
            )?;
            be.zeroize(&mut tau);
            auto.push((g, rows));
        }
        let mut sp = lift(&s_sparse)?;
        let to_dense = encrypt_rows(
            be,
            &gadget,
            &s_ntt,
            RowMessage::Poly(&sp),
            0,
            &seed_from(&mut rng),
            0,
        )?;
        be.zeroize(&mut sp);
        let mut s_ntt = s_ntt;
        be.zeroize(&mut s_ntt);
        let key_id = key_id_of(&lwe_ksk);
        let lwe_ksk_uploaded = be.upload_key_switch_key(&lwe_ksk.to_host_key(params)?)?;
        Ok(HeapKeys {
            key_id,
            to_sparse,
            lwe_ksk,
            lwe_ksk_uploaded,
            rgsw,
            auto,
            to_dense,
            fingerprint: fp,
        })
    }

    /// The LWE dimension `n_t` of the keys.
    pub fn lwe_dimension(&self) -> usize {
        self.rgsw.len() / KEYS_PER_PAIR * 2
    }

    /// The RGSW rows of the blind rotation in [`RnsBlindRotateBackend`]'s order: row
    /// `((p·3 + k)·2 + c)·D + j` decomposes component `c` by digit `j`, encrypting the bit
    /// `μ_{p,k}` of the pair `p` of `s_t` ([`unrolled_bits`]).
    ///
    /// [`RnsBlindRotateBackend`]: fhe_math::backend::RnsBlindRotateBackend
    pub fn rgsw_rows(&self) -> Vec<&B::Poly> {
        self.rgsw
            .iter()
            .flat_map(|pair| pair.iter().flat_map(|r| r.rows.iter()))
            .collect()
    }

    /// The automorphism keys as [`PackKeys`]: `(g, rows)` for every Galois element the
    /// packing and the trace use.
    ///
    /// [`PackKeys`]: fhe_math::backend::rns_blind_rotate::PackKeys
    pub fn pack_keys(&self) -> Vec<(usize, Vec<&B::Poly>)> {
        self.auto.iter().map(|(g, r)| (*g, r.refs())).collect()
    }

    /// The parameter fingerprint the keys were generated for.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Bytes of the keys in memory: ring keys (`rows × 2 × limbs × N × 8`), the LWE
    /// key-switching key (4-byte words), `to_sparse`.
    pub fn bytes(&self, be: &B) -> usize {
        let ring = be.ring();
        let row = 2 * ring.q_count() * ring.n() * 8;
        let rows: usize = self
            .rgsw
            .iter()
            .map(|r| r[0].rows.len() + r[1].rows.len())
            .sum::<usize>()
            + self.auto.iter().map(|(_, r)| r.rows.len()).sum::<usize>()
            + self.to_dense.rows.len();
        let ks = be.shape(&self.to_sparse.poly);
        rows * row
            + self.lwe_ksk.words.len() * 4
            + ks.components * (ring.q_count() + ring.p_count()) * ring.n() * 8
    }
}

/// The bits the blind-rotation key encrypts (key unrolling, `fhe_math`'s
/// `backend::rns_blind_rotate`): for each pair `(x, y)` of `s_t`'s bits (`n_t` even),
/// `x·y`, `x·(1 − y)`, `(1 − x)·y`.
pub(crate) fn unrolled_bits(s_t: &[u32]) -> Zeroizing<Vec<bool>> {
    Zeroizing::new(
        s_t.chunks_exact(2)
            .flat_map(|p| {
                let (x, y) = (p[0] == 1, p[1] == 1);
                [x && y, x && !y, !x && y]
            })
            .collect(),
    )
}

/// FNV-1a of the first 4096 words of the (public) LWE key-switching key.
pub(crate) fn key_id_of(ksk: &LweKeySwitchKey) -> u64 {
    let head: Vec<u8> = ksk
        .words
        .iter()
        .take(4096)
        .flat_map(|w| w.to_le_bytes())
        .collect();
    rlwe::chain::fnv1a(rlwe::chain::FNV_OFFSET, &head)
}

/// The relinearization key of the user levels: `ckks`'s key with every limb above the
/// output level `L − rescale_limbs` zeroed, so that it exists only over `Q_out·P` (the modulus
/// [`HeapParams::check_security`] checks; a key over the whole `Q_L·P` would exceed the
/// standard's bound at `HEAP_N13`). It relinearizes at levels `≤ L − rescale_limbs`.
pub fn user_relin_key<B: KeySwitchBackend>(
    ctx: &Context<B>,
    params: &HeapParams,
    sk: &SecretKey<B>,
    seed: &Seed,
) -> Result<rlwe::RelinKey<B>> {
    let mut rng = ChaCha20Rng::from_seed(seed.0);
    let (a, e) = (seed_from(&mut rng), seed_from(&mut rng));
    let mut rlk = ctx.key_generator().relin_key_with_seeds(sk, a, &e)?;
    keep_limbs_up_to(ctx.backend(), &mut rlk.0.poly, params.output_level())?;
    Ok(rlk)
}

/// Zeroes every limb of `poly` above `level` (the special primes kept): the `to_sparse` key
/// exists only over `q_0·P`, the user keys over `Q_out·P`.
pub(crate) fn keep_limbs_up_to<B: KeySwitchBackend>(
    be: &B,
    poly: &mut B::Poly,
    level: usize,
) -> Result<()> {
    let mut host = be.download(poly)?;
    for c in 0..host.components() {
        for s in level + 1..be.ring().q_count() {
            host.limb_mut(c, s).iter_mut().for_each(|w| *w = 0);
        }
    }
    *poly = be.upload(&host)?;
    Ok(())
}
