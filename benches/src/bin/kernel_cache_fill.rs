//! Compiles every kernel module for one GPU architecture into a kernel cache folder (the
//! layout `FHE_KERNEL_CACHE` reads, `fhe_cuda::KernelCache`), on any machine with libnvrtc and
//! no GPU: a GPU machine given that folder then loads the CUBINs instead of running NVRTC
//! (about a minute). An entry is used only where the key matches (source, options,
//! architecture, NVRTC version); anything else compiles there as usual.
//!
//! `kernel_cache_fill <folder> [arch, default sm_90]`

use fhe_cuda::kernel_cache::KernelCache;
use fhe_cuda::kernels::{MODULES, cached_or_compiled};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: kernel_cache_fill <folder> [arch, default sm_90]")?;
    let arch = args.next().unwrap_or_else(|| "sm_90".into());
    let cache = KernelCache::at(&dir);
    let t = std::time::Instant::now();
    let cubins = cached_or_compiled(&MODULES, &arch, Some(&cache))?;
    let compiled = cubins.iter().filter(|c| !c.from_cache).count();
    println!(
        "{} units for {arch} in {dir}: {compiled} compiled, {} already cached ({:.1} s)",
        cubins.len(),
        cubins.len() - compiled,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
