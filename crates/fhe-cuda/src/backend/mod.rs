//! [`CudaBackend`]: the backend traits ([`fhe_math::Backend`]) on a CUDA device, bit-identical
//! to [`fhe_math::CpuBackend`].
//!
//! Every method enqueues kernels on the backend's stream and returns once they are enqueued;
//! data crosses to the host only in `upload` / `download`. Shape checks mirror the CPU backend's
//! so both reject the same inputs. Asynchronous faults surface at the next `synchronize` or
//! `download`.
//!
//! Files: this one holds the backend's state, its buffers and the private helpers the traits
//! share; `impl_ring.rs`, `impl_key_switch.rs` and `impl_integer.rs` implement
//! [`RingBackend`], [`KeySwitchBackend`] and [`IntegerBackend`], `impl_blind_rotate.rs`
//! [`fhe_math::backend::blind_rotate::BlindRotateBackend`] (TFHE-style bootstrapping),
//! `impl_rns_blind_rotate.rs` [`fhe_math::backend::RnsBlindRotateBackend`] (blind rotation at a
//! full RNS modulus, CKKS bootstrapping by blind rotation); `keyswitch/` is the key
//! switches' kernel plumbing (`mod_up.rs`, `key_product.rs` with the fused key product,
//! `mod_down.rs` with `mod_down_any`, hoisting in its `mod.rs`) and `scale_round.rs` BFV's
//! scale-and-round product.

use crate::device::Device;
use crate::error::Error as CudaError;
use crate::kernels::keyswitch::ConvStrides;
use crate::kernels::ntt::Load;
use crate::kernels::{self, Ctx, LimbSet, elementwise as ew};
use crate::poly::DevicePoly;
use crate::scratch::{Scratch, ScratchBuf, ScratchPoly, ScratchStats};
use crate::side::{self, SideStream};
use crate::tables::{self, ModUpLayout, TableLayout};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use fhe_math::backend::{
    IntegerBackend, KeySwitchBackend, RingBackend, check_decoder, check_plain_ntt,
    check_residues_mod_t, decode_mod_t_host,
};
use fhe_math::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use fhe_math::error::{Error, Result};
use fhe_math::ntt::NttTable;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use fhe_math::scale_round::ScaleRoundTables;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod impl_blind_rotate;
mod impl_integer;
mod impl_key_switch;
mod impl_ring;
mod impl_rns_blind_rotate;
mod keyswitch;
mod scale_round;

pub use impl_blind_rotate::{CudaBootstrapKey, CudaKeySwitchKey, CudaLweBatch};

struct Inner {
    device: Arc<Device>,
    stream: Arc<CudaStream>,
    ring: Arc<RingContext>,
    tables: CudaSlice<u64>,
    layout: TableLayout,
    galois: Mutex<HashMap<u64, Arc<CudaSlice<u32>>>>,
    /// Device tables of each [`ScaleRoundTables`] used, by fingerprint (uploaded once).
    scale_round: Mutex<HashMap<Vec<u64>, Arc<SrDevice>>>,
    /// Device tables of each [`CrtDecoder`] used, by fingerprint (uploaded once).
    decoders: Mutex<HashMap<Vec<u64>, Arc<CudaSlice<u64>>>>,
    /// `(t mod q_s, shoup)` by Q slot for each plaintext modulus used, by `t` (uploaded once).
    t_tables: Mutex<HashMap<u64, Arc<CudaSlice<u64>>>>,
    /// The inverse NTT's constants with `t^-1` folded in, by `t` (uploaded once).
    t_inverse_consts: Mutex<HashMap<u64, Arc<CudaSlice<u64>>>>,
    /// BGV's level constants with `t` folded in ([`CudaBackend::level_times_t`]), by `t`,
    /// level and kind (computed once: they are needed on the host before a launch).
    level_times_t: Mutex<HashMap<(u64, usize, LevelConst), Arc<ShoupPairs>>>,
    /// mod_down's prescaled inverse constants for converted loads (`tables::mod_down_prescale`),
    /// by `t` (1 for CKKS; uploaded once), `None` where the ring has no such rows.
    mod_down_prescale: Mutex<HashMap<u64, Arc<Option<CudaSlice<u64>>>>>,
    /// NTT tables modulo each plaintext modulus used, by `t` (uploaded once).
    plain_ntts: Mutex<HashMap<u64, Arc<PlainNtt>>>,
    /// Page-locked host words the batched RNS blind rotation downloads its accumulators into
    /// (allocated at its first call, grown when a call needs more, kept: a page-locked
    /// allocation of hundreds of MB costs more than the download itself).
    rbr_staging: Mutex<Option<cudarc::driver::PinnedHostSlice<u64>>>,
    /// The workspace of internal temporaries (this instance's stream only).
    scratch: Scratch,
    /// The stream on which a key switch's `mod_down` starts early ([`crate::side`]).
    side: SideStream,
    /// Its lowest-priority twin: for key switches whose mod_up first pass is split
    /// (`keyswitch::split_first_on`), and for the `Q` part of BFV's product beside its lift to
    /// `B` (`scale_round`).
    side_low: SideStream,
}

/// The device NTT tables of one plaintext modulus (one slot).
struct PlainNtt {
    buf: CudaSlice<u64>,
    layout: TableLayout,
}

/// Multiply + relinearize with the product's first two components formed by the key product
/// ([`CudaBackend::mul_relin_mod_t`]): the operands, and the Q slots below which the key
/// product's rows add `P·(c_0, c_1)` (all the output's slots, or all but the top one, which the
/// rescale reads from the tensor's output). With `c2_on_load` no tensor launch is left: mod_up's
/// inverse NTT forms the product's `c_2 = a_1·b_1` as it loads the operands (`Load::Tensor(2)`)
/// and stores it for the key product's own digits.
#[derive(Clone, Copy)]
pub(crate) struct Product<'p> {
    a: &'p DevicePoly,
    b: &'p DevicePoly,
    slots: u32,
    c2_on_load: bool,
}

/// How the `c_0`, `c_1` that a relinearization adds its key switch to reach mod_down's last
/// step ([`CudaBackend::mod_down_any`]).
#[derive(Clone, Copy)]
pub(crate) enum Addend<'p> {
    /// In NTT form in the output buffer, read by the finish.
    Ntt,
    /// As the product of two ciphertexts, which the key product's rows add ([`Product`]); the
    /// finish reads the output's slots from `Product::slots` up only.
    Product(Product<'p>),
    /// In coefficient form in the output buffer (BFV's product before its NTT): mod_down's
    /// converting pass subtracts `P·c` from the converted special part, so the finish adds
    /// `NTT(c)` without reading the output and `c_0`, `c_1` are never transformed. Needs
    /// [`CudaBackend::mod_down_adds_coefficients`] and `t = 1`.
    Coefficients,
}

impl<'p> Addend<'p> {
    /// The product the key product's rows add, if any.
    fn product(self) -> Option<Product<'p>> {
        match self {
            Addend::Product(p) => Some(p),
            _ => None,
        }
    }
}

/// How [`CudaBackend::mod_up_key_product`] enqueues the fused key product's rows.
#[derive(Clone, Copy)]
enum Rows {
    /// All of them, after the first pass.
    All,
    /// None: they come back (as [`PendingRows`]) for [`CudaBackend::mod_down_any`] to launch, the
    /// special-prime rows (and row `rescale_top`, when that mod_down rescales) on the side
    /// stream.
    ForModDown { rescale_top: Option<usize> },
}

impl Rows {
    /// [`Rows::ForModDown`] where the side stream is on ([`crate::tuning::MODDOWN_OVERLAP`]), else
    /// [`Rows::All`].
    fn for_mod_down(rescale_top: Option<usize>) -> Self {
        if side::overlap_enabled() {
            Rows::ForModDown { rescale_top }
        } else {
            Rows::All
        }
    }
}

/// The fused key product's launches left to enqueue (the first pass of the `early` rows'
/// limbs enqueued): the rows `mod_down` starts from (`early`: the special primes', and the top
/// one with the rescale), for the side stream, and the others, for the main stream, after the
/// first pass of their limbs (`late_first`, empty where it was enqueued with the early ones);
/// with their arguments, and the workspace that first pass reads.
struct PendingRows<'a> {
    early: Vec<(u32, Option<u32>)>,
    /// The accumulator's one-component set over exactly the `early` rows.
    early_set: LimbSet,
    late: Vec<(u32, Option<u32>)>,
    late_first: Vec<kernels::ntt::Limb>,
    args: kernels::keyprod::KeyProdArgs,
    /// `mod_up`'s coefficient-form workspace, alive until `late_first` is enqueued.
    _workspace: ScratchPoly<'a>,
}

/// The device tables of one [`ScaleRoundTables`].
struct SrDevice {
    buf: CudaSlice<u64>,
    layout: kernels::scale_round::SrLayout,
}

/// The CUDA backend: device buffers ([`DevicePoly`]) and fused kernels, bound to one ring and one
/// stream of a [`Device`]. Cloning is cheap (shared tables).
#[derive(Clone)]
pub struct CudaBackend {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("device", &self.inner.device.name())
            .field("n", &self.inner.ring.n())
            .finish()
    }
}

fn shape_err(what: impl Into<String>) -> Error {
    Error::ShapeMismatch { what: what.into() }
}

fn check_covers(a: &DevicePoly, b: &DevicePoly, what: &str) -> Result<()> {
    let (sa, sb) = (a.shape, b.shape);
    if sb.level < sa.level || (sa.extended && !sb.extended) || a.n != b.n {
        return Err(shape_err(format!(
            "{what}: operand shape {sb:?} does not cover {sa:?}"
        )));
    }
    Ok(())
}

/// The value cached under `key`, or the one `make` builds (then cached).
fn cached<K: Eq + std::hash::Hash, V>(
    cache: &Mutex<HashMap<K, Arc<V>>>,
    key: K,
    make: impl FnOnce() -> Result<V>,
) -> Result<Arc<V>> {
    // A panic elsewhere while holding the lock leaves the map itself consistent.
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = map.get(&key) {
        return Ok(v.clone());
    }
    let v = Arc::new(make()?);
    map.insert(key, v.clone());
    Ok(v)
}

/// `(w, shoup(w))` constants by slot.
type ShoupPairs = Vec<(u64, u64)>;

/// Which level constants [`CudaBackend::level_times_t`] scales by `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum LevelConst {
    /// The rescale's `q_l^-1 mod q_s` for the slots below `l`.
    RescaleInverse,
    /// mod_down's `P^-1 mod q_s` for the slots up to `l`.
    SpecialInverse,
}

fn drv(op: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
    move |e| Error::from(CudaError::driver(op)(e))
}

impl CudaBackend {
    /// The tensor product `(a_0·b_0, a_0·b_1 + a_1·b_0, a_1·b_1)` at the lower level, its first
    /// two components written only at slots from `c01_from` (0: everywhere; below it they are
    /// left for the key product, [`Product`]).
    fn tensor_from(&self, a: &DevicePoly, b: &DevicePoly, c01_from: u32) -> Result<DevicePoly> {
        // Every active limb is written (but c_0, c_1 below `c01_from`); the inactive ones are
        // zero, as on the CPU.
        let out = self.product_buffer(a, b)?;
        let lo = out.limbs(self.s()).components(0, 1);
        let la = a.like(self.s(), &lo);
        let lb = b.like(self.s(), &lo);
        ew::tensor_from(&self.cx(), lo, la, lb, c01_from)?;
        Ok(out)
    }

    /// The 3-component buffer of the product of `a` and `b` (checked: two 2-component
    /// ciphertexts over Q) at their lower level, its inactive slots zeroed.
    fn product_buffer(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.check(a)?;
        self.check(b)?;
        if a.shape.components != 2
            || b.shape.components != 2
            || a.shape.extended
            || b.shape.extended
        {
            return Err(shape_err("tensor needs two 2-component ciphertexts over Q"));
        }
        self.alloc_zero_inactive(Shape {
            components: 3,
            level: a.shape.level.min(b.shape.level),
            extended: false,
        })
    }

    /// A host table copied to the device.
    fn upload_words(&self, host: &[u64]) -> Result<CudaSlice<u64>> {
        self.inner
            .stream
            .clone_htod(host)
            .map_err(drv("table upload"))
    }

    /// `(t mod q_s, shoup)` pairs by Q slot, uploaded at first use.
    fn t_table(&self, t: u64) -> Result<Arc<CudaSlice<u64>>> {
        cached(&self.inner.t_tables, t, || {
            let r = &self.inner.ring;
            let words: Vec<u64> = self
                .times_t(t, 0..r.q_count(), |_| 1)
                .into_iter()
                .flat_map(|(w, ws)| [w, ws])
                .collect();
            self.upload_words(&words)
        })
    }

    /// The inverse NTT's per-slot constants scaled by `t^-1` (`[n^-1·t^-1, shoup,
    /// n^-1·ψ^(-n/2)·t^-1, shoup]` by slot, the layout of the ring's own), uploaded at first
    /// use: an inverse NTT with them gives `t^-1·INTT(x)`, BGV's scaling before a rescale or
    /// `mod_down`, with no launch of its own. [`Error::NotInvertible`] where `t` has no inverse
    /// modulo a prime of the ring.
    fn t_inverse_consts(&self, t: u64) -> Result<Arc<CudaSlice<u64>>> {
        cached(&self.inner.t_inverse_consts, t, || {
            let r = &self.inner.ring;
            let mut words = Vec::with_capacity(4 * (r.q_count() + r.p_count()));
            for s in 0..r.q_count() + r.p_count() {
                let (m, tab) = (r.modulus(s), r.ntt(s));
                let inv_t = m.inv(m.reduce(t))?;
                for c in [tab.n_inv(), tab.inverse_final_twiddle()] {
                    let w = m.mul(c, inv_t);
                    words.extend_from_slice(&[w, m.shoup(w)]);
                }
            }
            self.upload_words(&words)
        })
    }

    /// mod_down's prescaled inverse constants for `t` (see `tables::mod_down_prescale`:
    /// 4 words by slot, then an offset by slot), uploaded at first use; `None` where the ring
    /// has no converted-load rows for mod_down.
    pub(super) fn mod_down_prescale(&self, t: u64) -> Result<Arc<Option<CudaSlice<u64>>>> {
        cached(&self.inner.mod_down_prescale, t, || {
            tables::mod_down_prescale(&self.inner.ring, t)
                .map(|w| self.upload_words(&w))
                .transpose()
        })
    }

    /// A backend for `ring` on stream 0 of `device`: uploads every table of the ring once.
    pub fn new(device: Arc<Device>, ring: Arc<RingContext>) -> crate::Result<Self> {
        Self::on_stream(device.clone(), device.stream(0).clone(), ring)
    }

    /// A backend for `ring` on a given stream of `device`, with its own scratch workspace.
    pub fn on_stream(
        device: Arc<Device>,
        stream: Arc<CudaStream>,
        ring: Arc<RingContext>,
    ) -> crate::Result<Self> {
        let n = ring.n();
        if !n.is_power_of_two() || !(8..=1 << 17).contains(&n) {
            return Err(CudaError::Unsupported {
                what: format!("ring degree {n} (8..=2^17)"),
            });
        }
        let (host, layout) = tables::build(&ring);
        let tables = stream
            .clone_htod(&host)
            .map_err(CudaError::driver("table upload"))?;
        let side = SideStream::new(device.context(), false)?;
        let side_low = SideStream::new(device.context(), true)?;
        Ok(CudaBackend {
            inner: Arc::new(Inner {
                side,
                side_low,
                scratch: Scratch::new(stream.clone()),
                device,
                stream,
                ring,
                tables,
                layout,
                galois: Mutex::new(HashMap::new()),
                scale_round: Mutex::new(HashMap::new()),
                decoders: Mutex::new(HashMap::new()),
                t_tables: Mutex::new(HashMap::new()),
                t_inverse_consts: Mutex::new(HashMap::new()),
                level_times_t: Mutex::new(HashMap::new()),
                mod_down_prescale: Mutex::new(HashMap::new()),
                plain_ntts: Mutex::new(HashMap::new()),
                rbr_staging: Mutex::new(None),
            }),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.inner.device
    }

    /// The stream this backend enqueues on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// Statistics of this backend's scratch workspace (shared by its clones; a backend made with
    /// [`CudaBackend::on_stream`] has its own). Its bytes are part of the device pool's in-use
    /// bytes.
    pub fn scratch_stats(&self) -> ScratchStats {
        self.inner.scratch.stats()
    }

    fn cx(&self) -> Ctx<'_> {
        let (tables, _g) = self.inner.tables.device_ptr(&self.inner.stream);
        Ctx {
            dev: &self.inner.device,
            stream: &self.inner.stream,
            tables,
            layout: &self.inner.layout,
            n: self.inner.ring.n() as u32,
        }
    }

    /// [`CudaBackend::cx`] on the side stream.
    fn cx_side(&self) -> Ctx<'_> {
        self.cx_on(&self.inner.side)
    }

    /// The context of the side stream `side`.
    fn cx_on<'a>(&'a self, side: &'a SideStream) -> Ctx<'a> {
        Ctx {
            stream: &side.stream,
            ..self.cx()
        }
    }

    fn s(&self) -> &CudaStream {
        &self.inner.stream
    }

    fn check(&self, p: &DevicePoly) -> Result<()> {
        let r = &self.inner.ring;
        if p.n != r.n()
            || p.q_capacity != r.q_count()
            || (p.shape.extended && p.p_count != r.p_count())
        {
            return Err(shape_err("buffer does not belong to this ring"));
        }
        // The same CUDA context (devices opened twice share the primary context), not just the
        // same `Arc`.
        if p.data.context().cu_ctx() != self.inner.device.context().cu_ctx() {
            return Err(Error::Backend {
                message: format!(
                    "a buffer of CUDA device {} was given to a backend on device {}",
                    p.device_ordinal(),
                    self.inner.device.ordinal()
                ),
            });
        }
        Ok(())
    }

    fn validate_shape(&self, shape: Shape) -> Result<()> {
        let r = &self.inner.ring;
        if shape.extended && r.p_count() == 0 {
            return Err(shape_err("no special primes for an extended buffer"));
        }
        if shape.level >= r.q_count() {
            return Err(Error::InvalidLevel {
                level: shape.level,
                reason: "above the top level",
            });
        }
        Ok(())
    }

    /// A buffer of `shape` with unspecified contents (every active limb is written before use).
    fn alloc(&self, shape: Shape) -> Result<DevicePoly> {
        self.validate_shape(shape)?;
        let r = &self.inner.ring;
        let p_count = if shape.extended { r.p_count() } else { 0 };
        let len = shape.components * (r.q_count() + p_count) * r.n();
        // SAFETY: the contents are written by kernels before any read of an active limb.
        let data = unsafe { self.inner.stream.alloc::<u64>(len.max(1)) }.map_err(drv("alloc"))?;
        Ok(DevicePoly {
            data,
            shape,
            n: r.n(),
            q_capacity: r.q_count(),
            p_count,
        })
    }

    /// A buffer of `shape` whose inactive `Q` slots are zero (like the CPU's) and whose active
    /// limbs are unspecified (the caller writes every one of them).
    fn alloc_zero_inactive(&self, shape: Shape) -> Result<DevicePoly> {
        let mut p = self.alloc(shape)?;
        for range in p.inactive_ranges() {
            let mut v = p.data.slice_mut(range);
            self.inner
                .stream
                .memset_zeros(&mut v)
                .map_err(drv("memset"))?;
        }
        Ok(p)
    }

    /// A scratch buffer of `shape` (unspecified contents, including the inactive slots), lent
    /// from the backend's workspace until the guard drops: keep the guard alive until the last
    /// kernel using it has been enqueued.
    fn scratch(&self, shape: Shape) -> Result<ScratchPoly<'_>> {
        self.validate_shape(shape)?;
        let r = &self.inner.ring;
        let p_count = if shape.extended { r.p_count() } else { 0 };
        let len = shape.components * (r.q_count() + p_count) * r.n();
        Ok(self
            .scratch_words(len)?
            .into_poly(shape, r.n(), r.q_count(), p_count))
    }

    /// `words` scratch words (unspecified contents), lent as by [`CudaBackend::scratch`].
    fn scratch_words(&self, words: usize) -> Result<ScratchBuf<'_>> {
        self.inner.scratch.take(words).map_err(drv("scratch alloc"))
    }

    /// The device index map of `X -> X^g` (uploaded once per element).
    fn galois_map(&self, g: u64) -> Result<Arc<CudaSlice<u32>>> {
        let g = g % (2 * self.inner.ring.n() as u64);
        cached(&self.inner.galois, g, || {
            let host = self.inner.ring.galois_map(g);
            self.inner
                .stream
                .clone_htod(&host[..])
                .map_err(drv("galois map upload"))
        })
    }

    fn q_only(ls: LimbSet, q_lo: u32, q_cnt: u32) -> LimbSet {
        LimbSet {
            q_lo,
            q_cnt,
            p_cnt: 0,
            ..ls
        }
    }

    /// Per-active-limb constants: `(reduce(s_i), shoup)` for the active slots of `p`.
    fn scalars(&self, p: &DevicePoly, scalars: &[u64], shoup: bool) -> Result<ew::Scalars> {
        let r = &self.inner.ring;
        let slots: Vec<usize> = (0..=p.shape.level)
            .chain(r.q_count()..r.q_count() + p.p_count)
            .collect();
        if scalars.len() != slots.len() {
            return Err(shape_err("one scalar per active limb is needed"));
        }
        let pairs: Vec<(u64, u64)> = slots
            .iter()
            .zip(scalars)
            .map(|(&s, &v)| {
                let m = r.modulus(s);
                let w = m.reduce(v);
                (w, if shoup { m.shoup(w) } else { 0 })
            })
            .collect();
        Ok(ew::Scalars::new(&pairs)?)
    }

    /// Uploads signed integer coefficients (`T` = i64, or i128 with `wide`) and reduces them
    /// into every limb of a new one-component buffer at `level` (`elementwise_lift`; inactive
    /// slots zero).
    fn lift_words<T: cudarc::driver::DeviceRepr>(
        &self,
        coeffs: &[T],
        level: usize,
        wide: bool,
    ) -> Result<DevicePoly> {
        fhe_math::backend::check_lift_args(&self.inner.ring, coeffs.len(), level)?;
        let src = self
            .inner
            .stream
            .clone_htod(coeffs)
            .map_err(drv("upload"))?;
        let (sp, _g) = src.device_ptr(self.s());
        let p = self.alloc_zero_inactive(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        ew::lift(&self.cx(), p.limbs(self.s()), sp, wide, 0)?;
        Ok(p)
    }

    /// Per-slot `(t·c_s mod q_s, shoup)` for `s` in `slots`, `c_s` given by `c(s)`: the
    /// constants that fold a BGV `t` scaling into a kernel's existing multiplier.
    fn times_t(
        &self,
        t: u64,
        slots: std::ops::Range<usize>,
        c: impl Fn(usize) -> u64,
    ) -> Vec<(u64, u64)> {
        let r = &self.inner.ring;
        slots
            .map(|s| {
                let m = r.modulus(s);
                let w = m.mul(m.reduce(t), c(s));
                (w, m.shoup(w))
            })
            .collect()
    }

    /// [`CudaBackend::times_t`] of a level's constants `kind` (the rescale's `q_l^-1` by slot
    /// below `l`, or mod_down's `P^-1` by slot up to `l`), computed at first use: each is a
    /// Shoup division per slot, on the host between two launches of the operator.
    pub(super) fn level_times_t(
        &self,
        t: u64,
        level: usize,
        kind: LevelConst,
    ) -> Result<Arc<ShoupPairs>> {
        cached(&self.inner.level_times_t, (t, level, kind), || {
            let r = &self.inner.ring;
            Ok(match kind {
                LevelConst::RescaleInverse => {
                    let k = r.rescale_constants(level);
                    self.times_t(t, 0..level, |s| k[s].value)
                }
                LevelConst::SpecialInverse => {
                    let table = r
                        .mod_down_table(level)
                        .ok_or_else(|| shape_err("mod_down needs special primes"))?;
                    self.times_t(t, 0..level + 1, |s| table.p_inv[s].value)
                }
            })
        })
    }

    /// Rescales every component of `a` by its top prime, preserving a message mod `t` when
    /// `t != 1` (`t·⌊t^-1·a / q_l⌉`, [`IntegerBackend::rescale_mod_t`]): the `t^-1` goes on the copied
    /// top limb and the `t` into the final multiplier.
    fn rescale_impl(&self, a: &mut DevicePoly, t_mod: u64) -> Result<()> {
        let level = a.shape.level;
        self.rescale_from(a.limbs(self.s()), a, t_mod, false)?;
        a.shape.level = level - 1;
        Ok(())
    }

    /// The rescale of `src` (the limbs of a buffer at level `l >= 1`, all components) into
    /// `a`'s limbs `0..l`: `a` itself (in place), or a buffer laid out like `src`'s, which the
    /// fused passes then only write (the caller checks `ntt::rescale_fusable`). `a`'s shape is
    /// left to the caller. With `copy_top` (out of place), `src`'s top limb is also copied into
    /// `a`'s, by the inverse NTT that reads it.
    fn rescale_from(&self, src: LimbSet, a: &DevicePoly, t_mod: u64, copy_top: bool) -> Result<()> {
        let level = src.q_cnt as usize - 1;
        let cx = self.cx();
        let t = self.scratch(Shape {
            components: src.comps as usize,
            level,
            extended: false,
        })?;
        let all_t = t.limbs(self.s());
        let all_a = LimbSet {
            ptr: a.ptr(self.s()),
            ..src
        };
        let src_delta = kernels::word_offset(all_a.ptr, src.ptr);
        let top_t = Self::q_only(all_t, level as u32, 1);
        let low_t = Self::q_only(all_t, 0, level as u32);
        let low_a = Self::q_only(all_a, 0, level as u32);
        // The top limb to coefficient form out of place (BGV: scaled by t^-1 too), then the
        // correction's NTT with the preparation fused into its loads and the finish (with t
        // folded in for BGV) into its stores.
        let mut inv = Self::q_only(src, level as u32, 1).limbs();
        for (x, y) in inv.iter_mut().zip(top_t.limbs()) {
            x.dst = y.dst;
        }
        let copy_delta = if copy_top { -src_delta } else { 0 };
        let tq = if t_mod != 1 {
            let consts = self.t_inverse_consts(t_mod)?;
            let (kp, _g) = consts.device_ptr(self.s());
            kernels::ntt::inverse_list_copying(&cx, &inv, Some(kp), copy_delta)?;
            Some(self.level_times_t(t_mod, level, LevelConst::RescaleInverse)?)
        } else {
            kernels::ntt::inverse_list_copying(&cx, &inv, None, copy_delta)?;
            None
        };
        let tops = top_t.limbs();
        let per = level;
        let fused: Vec<kernels::rescale::RescaleLimb> = low_t
            .limb_iter()
            .zip(low_a.limb_iter())
            .enumerate()
            .map(|(idx, (tl, al))| kernels::rescale::RescaleLimb {
                top: tops[idx / per].dst,
                tmp: tl.dst,
                out: al.dst,
                slot: al.slot,
            })
            .collect();
        if !kernels::rescale::forward_rescale(
            &cx,
            &fused,
            level,
            tq.as_deref().map(Vec::as_slice),
            src_delta,
        )? {
            if src_delta != 0 {
                return Err(shape_err("an out-of-place rescale needs the fused passes"));
            }
            ew::rescale_prepare(&cx, low_t, level as u32)?;
            kernels::ntt::forward(&cx, low_t)?;
            match &tq {
                None => ew::rescale_finish(&cx, low_a, low_t, level)?,
                Some(tq) => {
                    ew::rescale_finish_mod_t(&cx, low_a, low_t, level, &ew::Scalars::new(tq)?)?
                }
            }
        }
        Ok(())
    }
}

impl CudaBackend {
    fn binary(&self, a: &mut DevicePoly, b: &DevicePoly, what: &str, op: u32) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, what)?;
        if b.shape.components < a.shape.components {
            return Err(shape_err(format!("{what}: operand has fewer components")));
        }
        let la = a.limbs(self.s());
        let lb = b.like(self.s(), &la);
        ew::binary(&self.cx(), la, lb, op)?;
        Ok(())
    }
}
