//! [`Device`]: one CUDA device with its context, a small stream pool, the stream-ordered memory
//! pool (release threshold raised so freed memory stays cached) and the per-device cache of
//! compiled kernel modules (backed by the on-disk [`crate::kernel_cache`]).

use crate::error::{Error, Result};
use crate::kernel_cache::KernelCache;
use crate::kernels;
use cudarc::driver::sys::{CUmemPool_attribute, CUmemoryPool};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Number of streams in a device's pool.
const STREAMS: usize = 4;

/// Statistics of the device's stream-ordered memory pool, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes currently handed out to live buffers.
    pub in_use: u64,
    /// Bytes the pool currently holds from the driver (in use plus cached).
    pub reserved: u64,
    /// High-water mark of `in_use` since the device was opened (or the last reset).
    pub peak: u64,
    /// High-water mark of `reserved`.
    pub peak_reserved: u64,
}

/// How a device's kernel units ([`kernels::units`]: a module may be compiled in parts) were
/// obtained so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModuleLoads {
    /// Units read from the on-disk kernel cache.
    pub from_cache: usize,
    /// Units compiled by NVRTC in this process.
    pub compiled: usize,
}

/// The raw pool handle (owned by the driver; valid while the context lives).
#[derive(Clone, Copy, Debug)]
struct Pool(CUmemoryPool);
// SAFETY: a CUmemoryPool is a driver handle usable from any thread of the process.
unsafe impl Send for Pool {}
// SAFETY: as above; the driver synchronizes pool attribute calls.
unsafe impl Sync for Pool {}

/// A CUDA device ready for FHE work.
#[derive(Debug)]
pub struct Device {
    ctx: Arc<CudaContext>,
    streams: Vec<Arc<CudaStream>>,
    name: String,
    arch: String,
    /// Compute capability as `10·major + minor`.
    capability: u32,
    pool: Pool,
    modules: Mutex<HashMap<&'static str, Vec<Arc<CudaModule>>>>,
    loads: Mutex<ModuleLoads>,
    kernel_cache: Option<KernelCache>,
    functions: Mutex<HashMap<(&'static str, &'static str), CudaFunction>>,
    tuning: crate::Tuning,
}

/// Whether the CUDA driver library can be loaded (without it cudarc would panic).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda; no symbol is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl Device {
    /// Number of CUDA devices, or an error when there is no driver.
    pub fn count() -> Result<usize> {
        if !driver_present() {
            return Err(Error::NoDriver);
        }
        let n = CudaContext::device_count().map_err(Error::driver("cuDeviceGetCount"))?;
        Ok(n.max(0) as usize)
    }

    /// Opens device `ordinal`: checks driver, device and NVRTC, creates the context (event
    /// tracking disabled: one stream per evaluator, ordering explicit), the stream pool, and raises
    /// the memory pool's release threshold.
    pub fn new(ordinal: usize) -> Result<Arc<Device>> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        if !kernels::nvrtc_present() {
            return Err(Error::NoNvrtc);
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("context creation"))?;
        // SAFETY: called before any buffer exists; every buffer of this crate is used on the one
        // stream of its backend, and cross-stream use is ordered with explicit events.
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name().map_err(Error::driver("device name"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(Error::driver("compute capability"))?;
        let streams = (0..STREAMS)
            .map(|_| ctx.new_stream())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(Error::driver("stream creation"))?;
        // SAFETY: cu_device comes from a live context.
        let pool = unsafe { cudarc::driver::result::device::get_mem_pool(ctx.cu_device()) }
            .map_err(Error::driver("cuDeviceGetMemPool"))?;
        let mut threshold: u64 = u64::MAX;
        // SAFETY: RELEASE_THRESHOLD takes a cuuint64_t, `threshold` is one.
        unsafe {
            cudarc::driver::result::mem_pool::set_attribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut threshold as *mut u64 as *mut _,
            )
        }
        .map_err(Error::driver("cuMemPoolSetAttribute"))?;
        Ok(Arc::new(Device {
            ctx,
            streams,
            name,
            arch: format!("sm_{major}{minor}"),
            capability: (10 * major + minor) as u32,
            pool: Pool(pool),
            modules: Mutex::new(HashMap::new()),
            loads: Mutex::new(ModuleLoads::default()),
            kernel_cache: KernelCache::from_env(),
            functions: Mutex::new(HashMap::new()),
            tuning: crate::Tuning::MEASURED,
        }))
    }

    /// Device `ordinal` shared by the whole process: opened (and its kernel modules compiled,
    /// [`Device::warm_up`]) on the first call, then the same `Arc` for every later call, so that
    /// several backends on one GPU share its context, streams and compiled modules. The device
    /// stays open until the process ends. A failure is not cached (a later call tries again).
    pub fn shared(ordinal: usize) -> Result<Arc<Device>> {
        static SHARED: Mutex<Vec<(usize, Arc<Device>)>> = Mutex::new(Vec::new());
        let mut open = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, d)) = open.iter().find(|(o, _)| *o == ordinal) {
            return Ok(d.clone());
        }
        let d = Device::new(ordinal)?;
        d.warm_up()?;
        open.push((ordinal, d.clone()));
        Ok(d)
    }

    /// The device's name (e.g. "NVIDIA H100 80GB HBM3").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The launch choices on this device ([`crate::tuning`]).
    pub fn tuning(&self) -> &crate::Tuning {
        &self.tuning
    }

    /// The NVRTC architecture of the device, `sm_XY`.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The compute capability as `10·major + minor` (90 for sm_90).
    pub fn capability(&self) -> u32 {
        self.capability
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Stream `i` of the pool (modulo the pool size).
    pub fn stream(&self, i: usize) -> &Arc<CudaStream> {
        &self.streams[i % self.streams.len()]
    }

    /// Compiles (or reads from the on-disk cache) and loads every kernel module, all units at
    /// once on their own threads, so timings never include NVRTC.
    pub fn warm_up(&self) -> Result<()> {
        self.load_modules(&kernels::MODULES)
    }

    /// The folder of the on-disk kernel cache (`None` when it is off; see
    /// [`crate::kernel_cache`] for the `FHE_KERNEL_CACHE` variable).
    pub fn kernel_cache(&self) -> Option<&Path> {
        self.kernel_cache.as_ref().map(KernelCache::dir)
    }

    /// How many kernel units ([`kernels::units`]) this device read from the on-disk cache and
    /// how many it compiled.
    pub fn module_loads(&self) -> ModuleLoads {
        *self.loads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loads the modules of `names` not loaded yet: every unit from the on-disk cache, else
    /// compiled by NVRTC (all units in parallel).
    fn load_modules(&self, names: &[&'static str]) -> Result<()> {
        let mut mods = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let missing: Vec<&'static str> = names
            .iter()
            .copied()
            .filter(|m| !mods.contains_key(m))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let cubins = kernels::cached_or_compiled(&missing, &self.arch, self.kernel_cache.as_ref())?;
        let mut loaded: HashMap<&'static str, Vec<Arc<CudaModule>>> = HashMap::new();
        let mut loads = ModuleLoads::default();
        for cubin in cubins {
            let module = cubin.unit.module;
            let (m, from_cache) = self.load_unit(cubin)?;
            loaded.entry(module).or_default().push(m);
            if from_cache {
                loads.from_cache += 1;
            } else {
                loads.compiled += 1;
            }
        }
        mods.extend(loaded);
        let mut total = self.loads.lock().unwrap_or_else(|e| e.into_inner());
        total.from_cache += loads.from_cache;
        total.compiled += loads.compiled;
        Ok(())
    }

    /// Loads one unit's CUBIN into the context; returns the module and whether it came from the
    /// cache. A cached image the driver rejects (say, one written by another driver) is
    /// compiled afresh and its entry replaced.
    fn load_unit(&self, cubin: kernels::Cubin) -> Result<(Arc<CudaModule>, bool)> {
        let kernels::Cubin {
            unit,
            bytes,
            entry,
            from_cache,
        } = cubin;
        match self.ctx.load_module(Ptx::from_binary(bytes)) {
            Ok(m) => Ok((m, from_cache)),
            Err(_) if from_cache => {
                let bytes = kernels::compile_unit(&unit, &self.arch)?;
                if let Some(entry) = &entry {
                    let _ = KernelCache::store(entry, &bytes);
                }
                let m = self
                    .ctx
                    .load_module(Ptx::from_binary(bytes))
                    .map_err(Error::driver("module load"))?;
                Ok((m, false))
            }
            Err(e) => Err(Error::driver("module load")(e)),
        }
    }

    /// The loaded units of module `name` (loaded at first use).
    pub fn module(&self, name: &'static str) -> Result<Vec<Arc<CudaModule>>> {
        self.load_modules(&[name])?;
        let mods = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        Ok(mods.get(name).cloned().unwrap_or_default())
    }

    /// Kernel `function` of module `module`, from whichever of its units holds it (cached).
    pub fn function(&self, module: &'static str, function: &'static str) -> Result<CudaFunction> {
        if let Some(f) = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(module, function))
        {
            return Ok(f.clone());
        }
        let units = self.module(module)?;
        let mut last = None;
        let f = units
            .iter()
            .find_map(|u| u.load_function(function).map_err(|e| last = Some(e)).ok())
            .ok_or_else(|| match last {
                Some(e) => Error::driver("function lookup")(e),
                None => Error::UnknownModule {
                    module: module.into(),
                },
            })?;
        self.functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((module, function), f.clone());
        Ok(f)
    }

    fn pool_attr(&self, attr: CUmemPool_attribute) -> Result<u64> {
        let mut v: u64 = 0;
        // SAFETY: the queried attributes are cuuint64_t values; `v` is one.
        unsafe {
            cudarc::driver::result::mem_pool::get_attribute(
                self.pool.0,
                attr,
                &mut v as *mut u64 as *mut _,
            )
        }
        .map_err(Error::driver("cuMemPoolGetAttribute"))?;
        Ok(v)
    }

    /// Memory pool statistics (in use, reserved, peaks).
    pub fn pool_stats(&self) -> Result<PoolStats> {
        use CUmemPool_attribute::*;
        Ok(PoolStats {
            in_use: self.pool_attr(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
            reserved: self.pool_attr(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
            peak: self.pool_attr(CU_MEMPOOL_ATTR_USED_MEM_HIGH)?,
            peak_reserved: self.pool_attr(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)?,
        })
    }

    /// Resets the pool's high-water marks (`peak`, `peak_reserved`) to the current values, so
    /// that a later [`Device::pool_stats`] reports the peak since this call.
    pub fn reset_pool_peak(&self) -> Result<()> {
        use CUmemPool_attribute::*;
        for attr in [
            CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
        ] {
            let mut zero: u64 = 0;
            // SAFETY: the high-water attributes take a cuuint64_t that must be 0 (a reset);
            // `zero` is one.
            unsafe {
                cudarc::driver::result::mem_pool::set_attribute(
                    self.pool.0,
                    attr,
                    &mut zero as *mut u64 as *mut _,
                )
            }
            .map_err(Error::driver("cuMemPoolSetAttribute"))?;
        }
        Ok(())
    }

    /// Waits for all work on the device (`cuCtxSynchronize`: every stream of the pool, and any
    /// other stream of the shared context) and reports asynchronous errors by kind
    /// ([`Error::KernelFault`], [`Error::OutOfMemory`], ..., see [`Error::from_driver`]).
    ///
    /// One driver call, not one per stream of the pool: on an H200 a synchronized call returns
    /// 4–5 µs sooner (`gpu_perf`'s `GPU_PERF_WALL=1` compares the two).
    pub fn synchronize(&self) -> Result<()> {
        self.ctx
            .synchronize()
            .map_err(Error::driver("device synchronize"))?;
        self.ctx
            .check_err()
            .map_err(Error::driver("deferred driver error"))
    }
}
