//! Probe (an experiment, not a feature): do green contexts partition the SMs on this device,
//! and can a stream of a green context run a function loaded in the primary context on memory
//! allocated there? Prints what it finds; exits non-zero on a failure.

use cudarc::driver::{CudaContext, sys};
use std::mem::zeroed;

const SRC: &str = r#"
extern "C" __global__ void smid(unsigned* out) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    if (threadIdx.x == 0) out[blockIdx.x] = id + 1;
    // Keep the block resident a while, so that blocks spread over the partition.
    long long t0 = clock64();
    while (clock64() - t0 < 200000) {}
}
"#;

fn check(what: &str, r: sys::CUresult) -> bool {
    let ok = r == sys::CUresult::CUDA_SUCCESS;
    println!("{what}: {r:?}");
    ok
}

fn main() {
    let ctx = CudaContext::new(0).expect("context");
    // SAFETY: one stream per buffer here; ordering by synchronizing.
    unsafe { ctx.disable_event_tracking() };
    let ptx = cudarc::nvrtc::compile_ptx(SRC).expect("nvrtc");
    let m = ctx.load_module(ptx.clone()).expect("module");
    let f = m.load_function("smid").expect("function");
    let stream = ctx.default_stream();
    let blocks = 2048usize;
    let mut failed = false;
    // SAFETY: raw driver calls on live handles with out-parameters of the right types.
    unsafe {
        let mut res: sys::CUdevResource = zeroed();
        check(
            "cuDeviceGetDevResource",
            sys::cuDeviceGetDevResource(
                ctx.cu_device(),
                &mut res,
                sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
            ),
        );
        let sm = res.__bindgen_anon_1.sm;
        println!(
            "SMs {} min partition {} alignment {}",
            sm.smCount, sm.minSmPartitionSize, sm.smCoscheduledAlignment
        );
        for k in [8u32, 16, 32] {
            let mut group: sys::CUdevResource = zeroed();
            let mut rem: sys::CUdevResource = zeroed();
            let mut nb = 1u32;
            if !check(
                &format!("split {k}"),
                sys::cuDevSmResourceSplitByCount(&mut group, &mut nb, &res, &mut rem, 0, k),
            ) {
                failed = true;
                continue;
            }
            println!(
                "  group {} SMs, remainder {} SMs",
                group.__bindgen_anon_1.sm.smCount, rem.__bindgen_anon_1.sm.smCount
            );
            for (name, r) in [("group", &mut group), ("remainder", &mut rem)] {
                let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
                check("  desc", sys::cuDevResourceGenerateDesc(&mut desc, r, 1));
                let mut g: sys::CUgreenCtx = std::ptr::null_mut();
                check(
                    "  green ctx",
                    sys::cuGreenCtxCreate(&mut g, desc, ctx.cu_device(), 1),
                );
                let mut c: sys::CUcontext = std::ptr::null_mut();
                check("  ctx from green", sys::cuCtxFromGreenCtx(&mut c, g));
                let mut s: sys::CUstream = std::ptr::null_mut();
                check(
                    "  green stream",
                    sys::cuGreenCtxStreamCreate(&mut s, g, 1, 0),
                );
                let out = stream.alloc_zeros::<u32>(blocks).expect("alloc");
                stream.synchronize().expect("sync");
                let (ptr, _g) = cudarc::driver::DevicePtr::device_ptr(&out, &stream);
                let mut p = ptr;
                let mut params = [&mut p as *mut u64 as *mut std::ffi::c_void];
                // Launch the primary context's function on the green stream, with the primary
                // context current (as launch_raw would have it after binding).
                let r = sys::cuLaunchKernel(
                    f.cu_function(),
                    blocks as u32,
                    1,
                    1,
                    128,
                    1,
                    1,
                    0,
                    s,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                );
                let launched = check(&format!("  {name}: primary function on green stream"), r);
                let r2 = sys::cuStreamSynchronize(s);
                check("  green stream sync", r2);
                if launched && r2 == sys::CUresult::CUDA_SUCCESS {
                    let host = stream.clone_dtoh(&out).expect("dtoh");
                    let mut ids: Vec<u32> = host.iter().copied().filter(|&x| x > 0).collect();
                    let n = ids.len();
                    ids.sort();
                    ids.dedup();
                    println!(
                        "  {name}: {n} blocks ran on {} distinct SMs (ids {}..={})",
                        ids.len(),
                        ids.first().map_or(0, |x| x - 1),
                        ids.last().map_or(0, |x| x - 1)
                    );
                } else {
                    failed = true;
                }
                // With the green context current instead.
                check("  set green current", sys::cuCtxSetCurrent(c));
                let r = sys::cuLaunchKernel(
                    f.cu_function(),
                    blocks as u32,
                    1,
                    1,
                    128,
                    1,
                    1,
                    0,
                    s,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                );
                check("  primary function, green current", r);
                check("  sync", sys::cuStreamSynchronize(s));
                ctx.bind_to_thread().expect("bind");
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
