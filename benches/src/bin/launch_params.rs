//! How a launch's parameter bytes cost time: the host time of `cuLaunchKernelEx` and the
//! wall time of a short chain of dependent kernels (programmatic dependent launch, as the
//! library launches them) from an idle GPU, for kernels whose only difference is the size of
//! their by-value parameter struct. A measuring tool for PERF.md, not a test.
//!
//! `cargo run --release --bin launch_params` (needs a CUDA device). Each line
//! gives, for one parameter size and kernel length, the median host time of the chain's first
//! launch (right after a synchronize) and of the others, the wall time of the chain from an idle
//! GPU (synchronize, launches, synchronize) and its event time queued behind a long kernel.
//! `CHAIN` (default 4) kernels a chain, `BLOCKS` (64) blocks of 128 threads a kernel,
//! `PDL=all|rest|none` which launches allow programmatic dependent launch (`rest`: all but the
//! first), `PLAIN=1` launches those without it through `cuLaunchKernel`.
//!
//! A last table times the same chains as a CUDA graph captured from the stream launches: the
//! wall time from idle of `cuGraphLaunch` alone, and with every kernel node's parameters set
//! again before each launch (`cuGraphExecKernelNodeSetParams`, what a graph replayed on new
//! buffers would cost), against the stream launches.

use cudarc::driver::{CudaContext, CudaFunction, DevicePtr, sys};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use std::ffi::c_void;
use std::time::Instant;

/// Parameter struct sizes in bytes (a multiple of 8), one kernel each.
const SIZES: [usize; 5] = [64, 512, 1024, 2560, 3840];

fn source() -> String {
    let mut s = String::from(
        "template <int W> struct P { unsigned long long w[W]; };\n\
         template <int W> __device__ void body(const P<W>& p, unsigned long long* out, int iters) {\n\
           asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n\
           unsigned long long x = p.w[blockIdx.x % W] + threadIdx.x;\n\
           for (int i = 0; i < iters; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;\n\
           asm volatile(\"griddepcontrol.launch_dependents;\");\n\
           if (x == 42) out[blockIdx.x] = x;\n\
         }\n",
    );
    for b in SIZES {
        let w = b / 8;
        s.push_str(&format!(
            "extern \"C\" __global__ void k{b}(P<{w}> p, unsigned long long* out, int iters) \
             {{ body<{w}>(p, out, iters); }}\n"
        ));
    }
    s
}

/// One launch of `f` over `blocks` blocks of 128 threads, configured as the library's
/// `kernels::launch_raw` configures its launches (programmatic stream serialization when `pdl`)
/// but without its wrappers, so that only the driver's cost is timed.
fn launch(
    f: &CudaFunction,
    stream: sys::CUstream,
    params: &mut [*mut c_void],
    blocks: u32,
    pdl: bool,
) {
    if std::env::var("PLAIN").is_ok() && !pdl {
        // SAFETY: as below, through the plain launch call.
        unsafe {
            sys::cuLaunchKernel(
                f.cu_function(),
                blocks,
                1,
                1,
                128,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .expect("launch");
        return;
    }
    // SAFETY: a zeroed attribute is valid plain data; the field set is the one `id` selects.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: blocks,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 128,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: u32::from(pdl),
    };
    // SAFETY: `params` are the kernel's three arguments (struct, pointer, int) in order.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            f.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .expect("launch");
}

/// The kernel parameter array of a `k{size}` launch: pointers to its three arguments (the
/// parameter struct's words, the output pointer, the iteration count), valid while they live.
fn kernel_params(p: &mut [u64], o: &mut sys::CUdeviceptr, it: &mut i32) -> Vec<*mut c_void> {
    vec![
        p.as_mut_ptr() as *mut c_void,
        o as *mut _ as *mut c_void,
        it as *mut _ as *mut c_void,
    ]
}

/// The median, `NaN` for no samples.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let (major, minor) = (
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .unwrap(),
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
            .unwrap(),
    );
    let arch: &'static str = Box::leak(format!("sm_{major}{minor}").into_boxed_str());
    let ptx = compile_ptx_with_opts(
        source(),
        CompileOptions {
            arch: Some(arch),
            ..Default::default()
        },
    )
    .expect("NVRTC");
    let module = ctx.load_module(ptx).expect("module");
    // SAFETY: streams are ordered by this program's own synchronizes and events.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let e0 = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let e1 = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let out = stream.alloc_zeros::<u64>(1024).unwrap();
    let (out_ptr, _sync) = out.device_ptr(&stream);
    let cu_stream = stream.cu_stream();
    println!("device {}", ctx.name().unwrap_or_default());
    let chain: usize = env_or("CHAIN", 4).max(1);
    let pdl_mode = std::env::var("PDL").unwrap_or_else(|_| "all".into());
    let pdl_of = |k: usize| match pdl_mode.as_str() {
        "none" => false,
        "rest" => k > 0,
        _ => true,
    };
    println!("PDL {pdl_mode} PLAIN {}", std::env::var("PLAIN").is_ok());
    let blocks: u32 = env_or("BLOCKS", 64).max(1);
    for iters in [200i32, 2000] {
        for b in SIZES {
            let f = module.load_function(&format!("k{b}")).unwrap();
            let mut p = vec![7u64; b / 8];
            let mut o = out_ptr;
            let mut it = iters;
            let mut params = kernel_params(&mut p, &mut o, &mut it);
            let mut host = Vec::new();
            let mut first = Vec::new();
            let mut wall = Vec::new();
            let mut b2b = Vec::new();
            for rep in 0..300 {
                stream.synchronize().unwrap();
                let t0 = Instant::now();
                for k in 0..chain {
                    let t = Instant::now();
                    launch(&f, cu_stream, &mut params, blocks, pdl_of(k));
                    let us = t.elapsed().as_secs_f64() * 1e6;
                    if k == 0 {
                        first.push(us)
                    } else {
                        host.push(us)
                    }
                }
                stream.synchronize().unwrap();
                let idle = t0.elapsed().as_secs_f64() * 1e6;
                // The same chain queued behind a long kernel: back to back.
                let mut long_it = 200_000i32;
                let mut lp = kernel_params(&mut p, &mut o, &mut long_it);
                launch(&f, cu_stream, &mut lp, 1, true);
                e0.record(&stream).unwrap();
                for k in 0..chain {
                    launch(&f, cu_stream, &mut params, blocks, pdl_of(k));
                }
                e1.record(&stream).unwrap();
                e1.synchronize().unwrap();
                if rep >= 20 {
                    wall.push(idle);
                    b2b.push(e0.elapsed_ms(&e1).unwrap() as f64 * 1e3);
                }
            }
            println!(
                "params {b:5} B  iters {iters:5}  chain {chain}  launch host first {:5.2} others {:5.2} us  from idle (wall) {:6.2} us  back to back (events) {:6.2} us",
                median(first),
                median(host),
                median(wall),
                median(b2b)
            );
        }
    }
    graph_chains(&module, &stream, out_ptr, chain, blocks, &pdl_of);
}

/// The chains of `main` as a captured CUDA graph: wall time from idle (synchronize, host calls,
/// synchronize) of the stream launches, of `cuGraphLaunch`, and of `cuGraphLaunch` after every
/// node's parameters were set again, and the host time of those calls.
fn graph_chains(
    module: &std::sync::Arc<cudarc::driver::CudaModule>,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    out_ptr: sys::CUdeviceptr,
    chain: usize,
    blocks: u32,
    pdl_of: &dyn Fn(usize) -> bool,
) {
    let cu_stream = stream.cu_stream();
    for iters in [200i32, 2000] {
        for b in [64usize, 3840] {
            let f = module.load_function(&format!("k{b}")).unwrap();
            let mut p = vec![7u64; b / 8];
            let mut o = out_ptr;
            let mut it = iters;
            let mut params = kernel_params(&mut p, &mut o, &mut it);
            stream.synchronize().unwrap();
            let mut graph: sys::CUgraph = std::ptr::null_mut();
            let mut exec: sys::CUgraphExec = std::ptr::null_mut();
            // SAFETY: capture of this thread's launches on `cu_stream`, ended below; the graph
            // and its instance live to the end of this iteration and are destroyed there.
            unsafe {
                sys::cuStreamBeginCapture_v2(
                    cu_stream,
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                )
                .result()
                .expect("capture");
                for k in 0..chain {
                    launch(&f, cu_stream, &mut params, blocks, pdl_of(k));
                }
                sys::cuStreamEndCapture(cu_stream, &mut graph)
                    .result()
                    .expect("end capture");
                sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
                    .result()
                    .expect("instantiate");
            }
            let mut count = 0usize;
            // SAFETY: first call asks for the count, the second fills `nodes` of that length.
            let nodes = unsafe {
                sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count)
                    .result()
                    .unwrap();
                let mut nodes = vec![std::ptr::null_mut(); count];
                sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count)
                    .result()
                    .unwrap();
                nodes
            };
            let node_params = sys::CUDA_KERNEL_NODE_PARAMS {
                func: f.cu_function(),
                gridDimX: blocks,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: 128,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: 0,
                kernelParams: params.as_mut_ptr(),
                extra: std::ptr::null_mut(),
                kern: std::ptr::null_mut(),
                ctx: std::ptr::null_mut(),
            };
            let (mut w_stream, mut w_graph, mut w_set) = (Vec::new(), Vec::new(), Vec::new());
            let (mut h_graph, mut h_set) = (Vec::new(), Vec::new());
            for rep in 0..300 {
                stream.synchronize().unwrap();
                let t0 = Instant::now();
                for k in 0..chain {
                    launch(&f, cu_stream, &mut params, blocks, pdl_of(k));
                }
                stream.synchronize().unwrap();
                let ws = t0.elapsed().as_secs_f64() * 1e6;
                let t0 = Instant::now();
                // SAFETY: the instance made above, on the stream it was captured from.
                unsafe { sys::cuGraphLaunch(exec, cu_stream) }
                    .result()
                    .unwrap();
                let hg = t0.elapsed().as_secs_f64() * 1e6;
                stream.synchronize().unwrap();
                let wg = t0.elapsed().as_secs_f64() * 1e6;
                let t0 = Instant::now();
                for &node in &nodes {
                    // SAFETY: each node is a kernel node of `f`; the parameters are its three
                    // arguments, as captured.
                    unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node, &node_params) }
                        .result()
                        .unwrap();
                }
                // SAFETY: as above.
                unsafe { sys::cuGraphLaunch(exec, cu_stream) }
                    .result()
                    .unwrap();
                let hs = t0.elapsed().as_secs_f64() * 1e6;
                stream.synchronize().unwrap();
                let wset = t0.elapsed().as_secs_f64() * 1e6;
                if rep >= 20 {
                    w_stream.push(ws);
                    w_graph.push(wg);
                    w_set.push(wset);
                    h_graph.push(hg);
                    h_set.push(hs);
                }
            }
            println!(
                "graph params {b:5} B  iters {iters:5}  chain {chain} ({count} nodes)  from idle (wall): stream launches {:6.2}  graph {:6.2}  graph after set-params {:6.2} us  host: graph launch {:5.2}  set-params + launch {:5.2} us",
                median(w_stream),
                median(w_graph),
                median(w_set),
                median(h_graph),
                median(h_set)
            );
            // SAFETY: nothing uses the instance or the graph after this (synchronized above).
            unsafe {
                sys::cuGraphExecDestroy(exec).result().unwrap();
                sys::cuGraphDestroy(graph).result().unwrap();
            }
        }
    }
}
