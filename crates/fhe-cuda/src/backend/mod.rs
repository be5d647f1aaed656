//! [`CudaBackend`]: the [`Backend`] trait on a CUDA device, bit-identical to
//! [`fhe_math::CpuBackend`].
//!
//! Every method enqueues kernels on the backend's stream and returns once they are enqueued;
//! data crosses to the host only in `upload` / `download`. Shape checks mirror the CPU backend's
//! so both reject the same inputs. Asynchronous faults surface at the next `synchronize` or
//! `download`.

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
    Backend, check_decoder, check_plain_ntt, check_residues_mod_t, decode_mod_t_host,
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

mod keyswitch;
mod scale_round;

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
    /// [`Rows::ForModDown`] where the side stream is on (`FHE_MODDOWN_OVERLAP`), else
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

    /// The device table of a decoder, uploaded at first use.
    fn decoder_table(&self, d: &CrtDecoder) -> Result<Arc<CudaSlice<u64>>> {
        cached(
            &self.inner.decoders,
            kernels::decode::fingerprint(d),
            || self.upload_words(&kernels::decode::build(d)),
        )
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

    /// The device NTT tables modulo `ntt`'s modulus, uploaded at first use.
    fn plain_ntt(&self, ntt: &NttTable) -> Result<Arc<PlainNtt>> {
        cached(&self.inner.plain_ntts, ntt.modulus().value(), || {
            let (host, layout) = tables::build_ntt_only(&[ntt]);
            Ok(PlainNtt {
                buf: self.upload_words(&host)?,
                layout,
            })
        })
    }

    /// The context of the plaintext NTT tables `plain` (one slot: `t`).
    fn plain_cx<'a>(&'a self, plain: &'a PlainNtt, tables: u64) -> Ctx<'a> {
        Ctx {
            dev: &self.inner.device,
            stream: &self.inner.stream,
            tables,
            layout: &plain.layout,
            n: self.inner.ring.n() as u32,
        }
    }

    /// The single limb of `n` words at `ptr`, transformed with a plaintext NTT table.
    fn plain_limb(&self, ptr: u64) -> LimbSet {
        LimbSet {
            ptr,
            n: self.inner.ring.n() as u32,
            spc: 1,
            comp_lo: 0,
            comps: 1,
            q_lo: 0,
            q_cnt: 1,
            p_lo: 0,
            p_cnt: 0,
        }
    }

    /// [`Backend::upload_lifted_intt_mod_t`] on the device: the values go up, the inverse NTT
    /// modulo `t` and the centred lift run there, and the message comes back (one sync).
    fn upload_lifted_intt_mod_t_impl(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(DevicePoly, Vec<u64>)> {
        let ring = &self.inner.ring;
        fhe_math::backend::check_lift_args(ring, values.len(), level)?;
        check_residues_mod_t(ring, values, ntt)?;
        let plain = self.plain_ntt(ntt)?;
        let m = self
            .inner
            .stream
            .clone_htod(values)
            .map_err(drv("upload"))?;
        let p = self.alloc_zero_inactive(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        {
            let (mp, _g1) = m.device_ptr(self.s());
            let (pp, _g2) = plain.buf.device_ptr(self.s());
            kernels::ntt::inverse(&self.plain_cx(&plain, pp), self.plain_limb(mp))?;
            ew::lift(
                &self.cx(),
                p.limbs(self.s()),
                mp,
                false,
                ntt.modulus().value(),
            )?;
        }
        let mut host = vec![0u64; values.len()];
        self.inner
            .stream
            .memcpy_dtoh(&m, &mut host)
            .map_err(drv("download"))?;
        self.synchronize()?;
        Ok((p, host))
    }

    /// [`Backend::decode_mod_t`] (and with `ntt`, [`Backend::decode_mod_t_ntt`]) on the device:
    /// one kernel writes the `N` results and the block summaries, the NTT kernels transform the
    /// results modulo `t` in place, and everything comes down in one copy. When a coefficient
    /// is within the fraction's error of `Q/4` and none is surely above, the exact decision
    /// needs the limbs: the host body runs (rare: the noise must be within `2^-60` relative of
    /// a quarter of `Q`).
    fn decode_mod_t_impl(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: Option<&NttTable>,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.check(p)?;
        let ring = &self.inner.ring;
        check_decoder(ring, p.shape, decoder)?;
        if let Some(ntt) = ntt {
            check_plain_ntt(ring, decoder, ntt)?;
        }
        let table = self.decoder_table(decoder)?;
        let n = p.n;
        let words = kernels::decode::result_words(n);
        // SAFETY: the kernel writes every word (n results, one summary per block).
        let out = unsafe { self.inner.stream.alloc::<u64>(words) }.map_err(drv("alloc"))?;
        {
            let (tp, _g1) = table.device_ptr(self.s());
            let (op, _g2) = out.device_ptr(self.s());
            kernels::decode::crt_mod_t(
                &self.inner.device,
                &self.inner.stream,
                decoder,
                mode,
                (p.ptr(self.s()), n as u32, tp, op),
            )?;
            if let Some(ntt) = ntt {
                let plain = self.plain_ntt(ntt)?;
                let (pp, _g3) = plain.buf.device_ptr(self.s());
                kernels::ntt::forward(&self.plain_cx(&plain, pp), self.plain_limb(op))?;
            }
        }
        let mut host = vec![0u64; words];
        self.inner
            .stream
            .memcpy_dtoh(&out, &mut host)
            .map_err(drv("download"))?;
        self.synchronize()?;
        let (max_abs, sure, maybe) = kernels::decode::fold_summaries(&host[n..]);
        if maybe && !sure {
            let (mut m, f) = decode_mod_t_host(ring, &self.download(p)?, decoder, mode)?;
            if let Some(ntt) = ntt {
                ntt.forward(&mut m);
            }
            return Ok((m, f));
        }
        host.truncate(n);
        Ok((
            host,
            NoiseFraction {
                max_abs,
                error: decoder.error_bound(),
                above_quarter: sure,
            },
        ))
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
    /// `t != 1` (`t·⌊t^-1·a / q_l⌉`, [`Backend::rescale_mod_t`]): the `t^-1` goes on the copied
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

impl Backend for CudaBackend {
    type Poly = DevicePoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.inner.ring
    }

    fn device_name(&self) -> String {
        self.inner.device.name().to_string()
    }

    fn shape(&self, p: &DevicePoly) -> Shape {
        p.shape
    }

    fn zeros(&self, shape: Shape) -> Result<DevicePoly> {
        let mut p = self.alloc(shape)?;
        self.inner
            .stream
            .memset_zeros(&mut p.data)
            .map_err(drv("memset"))?;
        Ok(p)
    }

    fn upload(&self, host: &RnsPoly) -> Result<DevicePoly> {
        self.inner.ring.check(host)?;
        let data = self
            .inner
            .stream
            .clone_htod(host.raw())
            .map_err(drv("upload"))?;
        Ok(DevicePoly {
            data,
            shape: host.shape(),
            n: host.n(),
            q_capacity: host.q_capacity(),
            p_count: host.p_count(),
        })
    }

    fn download(&self, p: &DevicePoly) -> Result<RnsPoly> {
        let mut host = RnsPoly::zeros(p.n, p.shape, p.q_capacity, p.p_count)?;
        let len = p.len();
        self.inner
            .stream
            .memcpy_dtoh(&p.data.slice(..len), host.raw_mut())
            .map_err(drv("download"))?;
        self.synchronize()?;
        Ok(host)
    }

    fn upload_lifted(&self, coeffs: &[i128], level: usize) -> Result<DevicePoly> {
        // i128 is stored as (low, high) little-endian words on every host CUDA supports, the
        // layout `elementwise_lift` reads with `wide = 1`.
        self.lift_words(coeffs, level, true)
    }

    fn upload_lifted_i64(&self, coeffs: &[i64], level: usize) -> Result<DevicePoly> {
        self.lift_words(coeffs, level, false)
    }

    fn download_centered_q0(&self, p: &DevicePoly) -> Result<Vec<Option<i64>>> {
        self.check(p)?;
        if p.shape.extended {
            return Err(shape_err(
                "cannot take centred residues of an extended buffer (basis Q·P)",
            ));
        }
        let n = p.n;
        // SAFETY: every word is written by `elementwise_centered_q0` before it is read.
        let out = unsafe { self.inner.stream.alloc::<u64>(n) }.map_err(drv("alloc"))?;
        let a = Self::q_only(p.limbs(self.s()), 0, p.shape.level as u32 + 1).components(0, 1);
        {
            let (op, _g) = out.device_ptr(self.s());
            ew::centered_q0(&self.cx(), a, op)?;
        }
        let mut words = vec![0u64; n];
        self.inner
            .stream
            .memcpy_dtoh(&out, &mut words)
            .map_err(drv("download"))?;
        self.synchronize()?;
        // out[k] = (x << 1) | flag with |x| < 2^60: an arithmetic shift recovers x.
        Ok(words
            .into_iter()
            .map(|w| (w & 1 == 1).then_some(w as i64 >> 1))
            .collect())
    }

    fn decode_mod_t(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.decode_mod_t_impl(p, decoder, mode, None)
    }

    fn upload_lifted_intt_mod_t(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(DevicePoly, Vec<u64>)> {
        self.upload_lifted_intt_mod_t_impl(values, ntt, level)
    }

    fn decode_mod_t_ntt(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: &NttTable,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.decode_mod_t_impl(p, decoder, mode, Some(ntt))
    }

    fn duplicate(&self, p: &DevicePoly) -> Result<DevicePoly> {
        let data = self
            .inner
            .stream
            .clone_dtod(&p.data)
            .map_err(drv("device copy"))?;
        Ok(DevicePoly { data, ..*p })
    }

    fn set_level(&self, p: &mut DevicePoly, level: usize) -> Result<()> {
        if level > p.shape.level {
            return Err(Error::InvalidLevel {
                level,
                reason: "can only lower the level of a buffer",
            });
        }
        p.shape.level = level;
        Ok(())
    }

    fn truncate_components(&self, p: &mut DevicePoly, components: usize) -> Result<()> {
        if components > p.shape.components {
            return Err(shape_err(format!(
                "cannot grow components {} -> {components}",
                p.shape.components
            )));
        }
        p.shape.components = components;
        Ok(())
    }

    fn zeroize(&self, p: &mut DevicePoly) {
        // Enqueued on the buffer's stream before its free; a failure is recorded in the context
        // and reported by the next synchronize.
        let r = self.inner.stream.memset_zeros(&mut p.data);
        self.inner.device.context().record_err(r);
    }

    fn add_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.binary(a, b, "add", ew::OP_ADD)
    }

    fn sub_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.binary(a, b, "sub", ew::OP_SUB)
    }

    fn add_new(&self, a: &DevicePoly, b: &DevicePoly, subtract: bool) -> Result<DevicePoly> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "add")?;
        if b.shape.components < a.shape.components {
            return Err(shape_err("add: operand has fewer components"));
        }
        let mut out = self.alloc(a.shape)?;
        // The inactive limbs as the default body leaves them: copies of `a`'s.
        for range in a.inactive_ranges() {
            let mut dst = out.data.slice_mut(range.clone());
            self.inner
                .stream
                .memcpy_dtod(&a.data.slice(range), &mut dst)
                .map_err(drv("device copy"))?;
        }
        let lo = out.limbs(self.s());
        let op = if subtract { ew::OP_SUB } else { ew::OP_ADD };
        ew::binary_new(
            &self.cx(),
            lo,
            a.like(self.s(), &lo),
            b.like(self.s(), &lo),
            op,
        )?;
        Ok(out)
    }

    fn add_component_assign(
        &self,
        a: &mut DevicePoly,
        component: usize,
        b: &DevicePoly,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "add to component")?;
        if component >= a.shape.components {
            return Err(shape_err(format!("no component {component} to add to")));
        }
        let la = a.limbs(self.s()).components(component as u32, 1);
        let lb = b.like(self.s(), &la).components(0, 1);
        ew::binary(&self.cx(), la, lb, ew::OP_ADD)?;
        Ok(())
    }

    fn copy_component(
        &self,
        src: &DevicePoly,
        src_component: usize,
        dst: &mut DevicePoly,
        dst_component: usize,
    ) -> Result<()> {
        self.check(src)?;
        self.check(dst)?;
        check_covers(dst, src, "copy component")?;
        if src_component >= src.shape.components || dst_component >= dst.shape.components {
            return Err(shape_err("copy component: no such component"));
        }
        let ld = dst.limbs(self.s()).components(dst_component as u32, 1);
        let ls = src.like(self.s(), &ld).components(src_component as u32, 1);
        ew::binary(&self.cx(), ld, ls, ew::OP_COPY)?;
        Ok(())
    }

    fn neg_assign(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        ew::neg(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn mul_plain_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "multiply by plaintext")?;
        let la = a.limbs(self.s());
        let lb = b.like(self.s(), &la).components(0, 1);
        ew::binary(&self.cx(), la, lb, ew::OP_MUL)?;
        Ok(())
    }

    fn mul_plain_acc(&self, acc: &mut DevicePoly, a: &DevicePoly, b: &DevicePoly) -> Result<()> {
        self.check(acc)?;
        check_covers(acc, a, "multiply-accumulate")?;
        check_covers(acc, b, "multiply-accumulate")?;
        if a.shape.components < acc.shape.components {
            return Err(shape_err(
                "multiply-accumulate: operand has fewer components",
            ));
        }
        let lacc = acc.limbs(self.s());
        let la = a.like(self.s(), &lacc);
        let lb = b.like(self.s(), &lacc).components(0, 1);
        ew::mul_acc(&self.cx(), lacc, la, lb)?;
        Ok(())
    }

    fn mul_scalar_assign(&self, a: &mut DevicePoly, scalars: &[u64]) -> Result<()> {
        self.check(a)?;
        let sc = self.scalars(a, scalars, true)?;
        ew::scalar(&self.cx(), a.limbs(self.s()), &sc, ew::OP_MUL)?;
        Ok(())
    }

    fn add_scalar_assign(
        &self,
        a: &mut DevicePoly,
        component: usize,
        scalars: &[u64],
    ) -> Result<()> {
        self.check(a)?;
        if component >= a.shape.components {
            return Err(shape_err(
                "one scalar per active limb of an existing component is needed",
            ));
        }
        let sc = self.scalars(a, scalars, false)?;
        ew::scalar(
            &self.cx(),
            a.limbs(self.s()).components(component as u32, 1),
            &sc,
            ew::OP_ADD,
        )?;
        Ok(())
    }

    fn ntt(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        kernels::ntt::forward(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn intt(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        kernels::ntt::inverse(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn tensor(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.tensor_from(a, b, 0)
    }

    /// Default: `tensor`, then `relinearize_mod_t`. Where the fused key product and mod_down's
    /// fused finish apply (`CudaBackend::product_in_key_product`), the tensor writes only
    /// `c_2` (and, with the rescale, the top limb of `c_0`, `c_1`, which the rescale's side
    /// chain reads), and the key product's rows add `P·(c_0, c_1)` to the accumulator, so that
    /// mod_down's finish gives `c_0 + (acc_0 - conv_0)·P^-1` without `c_0`, `c_1` written and
    /// read back: the same words.
    fn mul_relin_mod_t(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<DevicePoly> {
        if !self.product_in_key_product() {
            let c = self.tensor(a, b)?;
            return self.relinearize_mod_t(c, relin_key, rescale, t);
        }
        let level = a.shape.level.min(b.shape.level);
        let slots = level as u32 + u32::from(!rescale);
        // Without the rescale no slot of c_0, c_1 is read, so with c_2 formed by mod_up's first
        // pass the tensor has nothing left to write: one launch fewer at the head of a chain
        // that, from an idle GPU, waits on the host's launches.
        let c2_on_load = !rescale && self.c2_on_load();
        let c = match c2_on_load {
            true => self.product_buffer(a, b)?,
            false => self.tensor_from(a, b, slots)?,
        };
        let product = Product {
            a,
            b,
            slots,
            c2_on_load,
        };
        self.relinearize_from(c, relin_key, rescale, t, None, Addend::Product(product))
    }

    fn tensor_scale_round(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
    ) -> Result<DevicePoly> {
        self.check_scale_round_inputs(a, b, tables)?;
        self.tensor_scale_round_impl(a, b, tables, true)
    }

    fn automorphism_into(
        &self,
        a: &DevicePoly,
        galois: u64,
        out: &mut DevicePoly,
        mapped: usize,
    ) -> Result<()> {
        self.check(a)?;
        self.check(out)?;
        check_covers(out, a, "automorphism")?;
        if galois.is_multiple_of(2) || mapped > a.shape.components || mapped > out.shape.components
        {
            return Err(shape_err(format!(
                "automorphism: bad Galois element {galois} or component count"
            )));
        }
        let map = self.galois_map(galois)?;
        let (mp, _g) = map.device_ptr(self.s());
        let lo = out.limbs(self.s()).components(0, mapped as u32);
        let la = a.like(self.s(), &lo);
        kernels::automorphism::apply(&self.cx(), lo, la, mp)?;
        Ok(())
    }

    fn rescale(&self, a: &mut DevicePoly) -> Result<()> {
        self.rescale_mod_t(a, 1)
    }

    fn rescaled_mod_t(&self, a: &DevicePoly, t: u64) -> Result<DevicePoly> {
        self.check(a)?;
        let level = a.shape.level;
        if level == 0 || a.shape.extended {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        if !kernels::rescale::rescale_fusable(&self.cx(), level) {
            let mut out = self.duplicate(a)?;
            self.rescale_impl(&mut out, t)?;
            return Ok(out);
        }
        // A new buffer laid out like `a` (same slots per component): its limbs 0..l are written
        // by the rescale's fused passes, which read `a`'s; its slots l and above, inactive
        // afterwards, receive `a`'s (so every word is what a copy rescaled in place holds): slot
        // l by the inverse NTT that reads it, the others (below a's top level) by a copy.
        // `FHE_RESCALE_COPY_FOLD=0` (A/B runs): every such slot by the copy.
        let mut out = self.alloc(a.shape)?;
        let src = a.limbs(self.s());
        let fold = copy_fold_on() as usize;
        if a.q_capacity > level + fold {
            let above = LimbSet {
                q_lo: (level + fold) as u32,
                q_cnt: (a.q_capacity - level - fold) as u32,
                p_cnt: 0,
                ..src
            };
            ew::binary(&self.cx(), out.like(self.s(), &above), above, ew::OP_COPY)?;
        }
        self.rescale_from(src, &out, t, fold == 1)?;
        out.shape.level = level - 1;
        Ok(out)
    }

    fn rescale_mod_t(&self, a: &mut DevicePoly, t: u64) -> Result<()> {
        self.check(a)?;
        let level = a.shape.level;
        if level == 0 || a.shape.extended {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        self.rescale_impl(a, t)
    }

    fn mod_up(&self, c: &DevicePoly, component: usize) -> Result<DevicePoly> {
        // Returned to the caller: inactive slots zero, as on the CPU.
        let mut ext = self.alloc_zero_inactive(self.mod_up_shape(c, component)?)?;
        self.mod_up_into(c, component, &mut ext)?;
        Ok(ext)
    }

    fn key_product(
        &self,
        ext: &DevicePoly,
        key: &DevicePoly,
        galois: Option<u64>,
        acc: &mut DevicePoly,
    ) -> Result<()> {
        self.check(ext)?;
        self.check(key)?;
        self.check(acc)?;
        let digits = ext.shape.components;
        if !acc.shape.extended
            || acc.shape.components != 2
            || !key.shape.extended
            || key.shape.components < 2 * digits
        {
            return Err(shape_err(
                "key_product: accumulator, digits or key have the wrong shape",
            ));
        }
        check_covers(acc, ext, "key_product")?;
        check_covers(acc, key, "key_product")?;
        self.key_product_impl(&self.cx(), ext, key, galois, acc, false)
    }

    fn mod_down_into(&self, acc: &DevicePoly, out: &mut DevicePoly, rescale: bool) -> Result<()> {
        self.mod_down_impl(acc, out, rescale)
    }

    fn mod_down_into_mod_t(
        &self,
        acc: &mut DevicePoly,
        out: &mut DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<()> {
        self.mod_down_any(acc, out, rescale, None, t, None, Addend::Ntt)
    }

    fn key_switch(
        &self,
        c: &DevicePoly,
        component: usize,
        key: &DevicePoly,
        galois: Option<u64>,
    ) -> Result<DevicePoly> {
        // The default body with scratch digits and accumulator, and the fused last NTT pass +
        // key product where it applies.
        if galois.is_some_and(|g| g.is_multiple_of(2)) {
            return Err(shape_err("key_switch: bad Galois element"));
        }
        let mut ext = self.scratch(self.mod_up_shape(c, component)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        let pending = self.mod_up_and_product(
            c, component, key, galois, &mut ext, &mut acc, None, None, None,
        )?;
        let mut out = self.zeros(Shape {
            components: 2,
            level: c.shape.level,
            extended: false,
        })?;
        self.mod_down_any(&acc, &mut out, false, None, 1, pending, Addend::Ntt)?;
        Ok(out)
    }

    fn relinearize_mod_t(
        &self,
        c: DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<DevicePoly> {
        self.relinearize_from(c, relin_key, rescale, t, None, Addend::Ntt)
    }

    fn tensor_scale_round_relin(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
        relin_key: &DevicePoly,
    ) -> Result<DevicePoly> {
        // The product's third component goes to mod_up in coefficient form, before any NTT of
        // the product.
        let c = self.tensor_scale_round_coeff(a, b, tables)?;
        self.relinearize_from_coeff(c, relin_key)
    }

    fn tensor_scale_round_coeff(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
    ) -> Result<DevicePoly> {
        self.check_scale_round_inputs(a, b, tables)?;
        self.tensor_scale_round_impl(a, b, tables, false)
    }

    fn relinearize_from_coeff(&self, c: DevicePoly, relin_key: &DevicePoly) -> Result<DevicePoly> {
        self.check(&c)?;
        if c.shape.components != 3 || c.shape.extended {
            return Err(shape_err(
                "relinearize: a 3-component buffer over Q is needed",
            ));
        }
        let level = c.shape.level;
        // c_2's coefficient form prescaled takes the place of mod_up's inverse NTT
        // (`relinearize_from` with `coeffs`). Where mod_down converts or lifts on load, c_0 and
        // c_1 stay in coefficient form and reach the result through that first pass
        // (`Addend::Coefficients`); elsewhere they go to NTT form first.
        let coeffs = self.scratch(Self::mod_up_coeffs_shape(level))?;
        let all = Self::q_only(c.limbs(self.s()), 0, level as u32 + 1);
        self.mod_up_prescale(all.components(2, 1), &coeffs, level)?;
        let addend = match bfv_coefficient_addend_on() && self.mod_down_adds_coefficients() {
            true => Addend::Coefficients,
            false => {
                kernels::ntt::forward(&self.cx(), all.components(0, 2))?;
                Addend::Ntt
            }
        };
        self.relinearize_from(c, relin_key, false, 1, Some(coeffs), addend)
    }

    fn rotate_hoisted_mod_t(
        &self,
        c: &DevicePoly,
        keys: &[(u64, &DevicePoly)],
        t: u64,
    ) -> Result<Vec<DevicePoly>> {
        let level = c.shape.level;
        if let Some((g, _)) = keys.iter().find(|(g, _)| g.is_multiple_of(2)) {
            return Err(shape_err(format!("rotate: bad Galois element {g}")));
        }
        // Scratch digits and one scratch accumulator reused by every rotation (stream order),
        // alive until the last mod_down is enqueued.
        let mut ext = self.scratch(self.mod_up_shape(c, 1)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        // One rotation fuses mod_up's last NTT pass with its key product where that applies and
        // starts its mod_down on the side stream; several share the NTT-form digits (hoisting).
        if let [(g, key)] = keys {
            let pending =
                self.mod_up_and_product(c, 1, key, Some(*g), &mut ext, &mut acc, None, None, None)?;
            let mut out = self.alloc_zero_inactive(Shape {
                components: 2,
                level,
                extended: false,
            })?;
            self.mod_down_any(
                &acc,
                &mut out,
                false,
                Some((c, *g)),
                t,
                pending,
                Addend::Ntt,
            )?;
            return Ok(vec![out]);
        }
        self.mod_up_into(c, 1, &mut ext)?;
        self.hoisted_rotations(c, &ext, acc, keys, t)
    }

    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::uniform(&self.cx(), p.limbs(self.s()), seed, domain, poly_index)?;
        Ok(p)
    }

    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::small(&self.cx(), p.limbs(self.s()), seed, domain, poly_index, 0)?;
        Ok(p)
    }

    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::small(&self.cx(), p.limbs(self.s()), seed, domain, poly_index, 1)?;
        Ok(p)
    }

    fn synchronize(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .map_err(drv("stream synchronize"))?;
        self.inner
            .device
            .context()
            .check_err()
            .map_err(drv("deferred driver error"))
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

/// Whether the out-of-place rescale copies the dropped limb in its inverse NTT
/// (`FHE_RESCALE_COPY_FOLD=0` turns it off, for A/B runs).
fn copy_fold_on() -> bool {
    true
}

/// Whether BFV's multiply + relinearize leaves the product's `c_0`, `c_1` in coefficient form
/// for mod_down's conversion to add ([`Addend::Coefficients`]) where that applies
/// (`FHE_BFV_COEFF_ADDEND=0` transforms them as before, for A/B runs).
fn bfv_coefficient_addend_on() -> bool {
    true
}
