//! From a module's source to its CUBINs: the NVRTC options, the module's separately compiled
//! units (the `ntt` module is split by its number of stages S so NVRTC compiles the parts in
//! parallel), and the on-disk cache in front of NVRTC.

use super::{nvrtc, nvrtc_present, source};
use crate::error::{Error, Result};
use crate::kernel_cache::KernelCache;
use std::path::PathBuf;

/// The NVRTC options used for a module compiled for `arch` (e.g. `"sm_90"`).
pub fn compile_options(arch: &str) -> Vec<String> {
    vec![
        "--device-int128".into(),
        "-std=c++17".into(),
        format!("--gpu-architecture={arch}"),
    ]
}

/// One separately compiled part of a kernel module: the module's source with extra defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The module (`.cu` file stem).
    pub module: &'static str,
    /// The unit's name (the module's, or `module.part`), used in cache entries and errors.
    pub name: String,
    /// The defines selecting the unit's kernels (`-DNAME=VALUE`).
    pub defines: Vec<String>,
}

/// The units of `module`. The `ntt` module has one unit per number of stages S in 3..=11 of its
/// register-blocked kernels (the S = 3 unit also holds the generic passes); about 5-9 s of
/// NVRTC each on one core, against 66 s for the whole module. Every other module is one unit.
pub fn units(module: &str) -> Result<Vec<Unit>> {
    let (module, _) = module_source(module)?;
    Ok(match module {
        "ntt" => (3..=11)
            .map(|s| Unit {
                module,
                name: format!("ntt.s{s}"),
                defines: vec![
                    format!("-DNTT_S_MIN={s}"),
                    format!("-DNTT_S_MAX={s}"),
                    format!("-DNTT_GENERIC={}", u32::from(s == 3)),
                ],
            })
            .collect(),
        _ => vec![Unit {
            module,
            name: module.into(),
            defines: Vec::new(),
        }],
    })
}

/// The module's static name and source.
fn module_source(module: &str) -> Result<(&'static str, &'static str)> {
    super::MODULES
        .iter()
        .find(|m| **m == module)
        .and_then(|m| Some((*m, source(m)?)))
        .ok_or_else(|| Error::UnknownModule {
            module: module.into(),
        })
}

/// The NVRTC options of `unit` compiled for `arch`: [`compile_options`], then the unit's
/// defines.
fn unit_options(unit: &Unit, arch: &str) -> Vec<String> {
    let mut options = compile_options(arch);
    options.extend(unit.defines.iter().cloned());
    options
}

fn nvrtc_compile(unit: &Unit, options: &[String]) -> Result<Vec<u8>> {
    if !nvrtc_present() {
        return Err(Error::NoNvrtc);
    }
    let (_, src) = module_source(unit.module)?;
    nvrtc::compile_cubin(src, &format!("{}.cu", unit.name), options).map_err(|log| Error::Compile {
        module: unit.name.clone(),
        log,
    })
}

/// Compiles `unit` with NVRTC for `arch` (a real architecture, e.g. `"sm_90"`) and returns its
/// CUBIN, bypassing the cache; needs only libnvrtc, no GPU.
pub fn compile_unit(unit: &Unit, arch: &str) -> Result<Vec<u8>> {
    nvrtc_compile(unit, &unit_options(unit, arch))
}

/// Compiles every unit of `module` for `arch` with NVRTC (in parallel, bypassing the cache) and
/// returns their CUBINs in the order of [`units`].
pub fn compile(module: &str, arch: &str) -> Result<Vec<Vec<u8>>> {
    let units = units(module)?;
    in_parallel(units.iter().map(|u| move || compile_unit(u, arch)))
        .into_iter()
        .collect()
}

/// A unit's CUBIN and where it came from.
#[derive(Debug)]
pub struct Cubin {
    /// The unit it was compiled from.
    pub unit: Unit,
    /// The device code.
    pub bytes: Vec<u8>,
    /// Its entry in the on-disk cache (`None` when the cache is off).
    pub entry: Option<PathBuf>,
    /// Whether it was read from the cache (`false`: compiled by NVRTC in this call).
    pub from_cache: bool,
}

/// The CUBIN of `unit` for `arch`: read from `cache` when it holds a valid entry, otherwise
/// compiled by NVRTC and stored there (a failed store is ignored: the cache is an optimization).
fn unit_cubin(unit: &Unit, arch: &str, cache: Option<&KernelCache>) -> Result<Cubin> {
    if !nvrtc_present() {
        return Err(Error::NoNvrtc);
    }
    let options = unit_options(unit, arch);
    let entry = match cache {
        Some(c) => {
            let version = nvrtc::version().map_err(|log| Error::Compile {
                module: unit.name.clone(),
                log,
            })?;
            let (_, src) = module_source(unit.module)?;
            Some(c.entry(&unit.name, src, &options, version))
        }
        None => None,
    };
    let cached = entry.as_deref().and_then(KernelCache::load);
    let from_cache = cached.is_some();
    let bytes = match cached {
        Some(bytes) => bytes,
        None => {
            let bytes = nvrtc_compile(unit, &options)?;
            if let Some(e) = &entry {
                let _ = KernelCache::store(e, &bytes);
            }
            bytes
        }
    };
    Ok(Cubin {
        unit: unit.clone(),
        bytes,
        entry,
        from_cache,
    })
}

/// The CUBINs of every unit of `modules` for `arch`, each from `cache` or compiled by NVRTC,
/// all units at once on their own threads; in the order of `modules`, then of [`units`].
pub fn cached_or_compiled(
    modules: &[&str],
    arch: &str,
    cache: Option<&KernelCache>,
) -> Result<Vec<Cubin>> {
    let mut all = Vec::new();
    for m in modules {
        all.extend(units(m)?);
    }
    in_parallel(all.iter().map(|u| move || unit_cubin(u, arch, cache)))
        .into_iter()
        .collect()
}

/// Runs every job on its own scoped thread and returns their results in order (NVRTC compiles
/// distinct programs concurrently; a panic in a job is resumed here).
fn in_parallel<T: Send>(jobs: impl Iterator<Item = impl FnOnce() -> T + Send>) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs.map(|job| s.spawn(job)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_split_only_the_ntt_module() {
        let ntt = units("ntt").unwrap();
        assert_eq!(ntt.len(), 9);
        let names: Vec<_> = ntt.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names[0], "ntt.s3");
        assert_eq!(names[8], "ntt.s11");
        // Exactly one unit holds the generic passes.
        let generic = ntt
            .iter()
            .filter(|u| u.defines.contains(&"-DNTT_GENERIC=1".to_string()))
            .count();
        assert_eq!(generic, 1);
        for m in super::super::MODULES.iter().filter(|m| **m != "ntt") {
            let u = units(m).unwrap();
            assert_eq!(u.len(), 1);
            assert_eq!((u[0].module, u[0].name.as_str()), (*m, *m));
            assert!(u[0].defines.is_empty());
        }
        assert!(matches!(units("nope"), Err(Error::UnknownModule { .. })));
    }

    #[test]
    fn the_unit_defines_follow_the_base_options() {
        let u = &units("ntt").unwrap()[2];
        let o = unit_options(u, "sm_90");
        assert_eq!(&o[..3], compile_options("sm_90").as_slice());
        assert_eq!(&o[3..6], u.defines.as_slice());
    }

    #[test]
    fn in_parallel_keeps_the_order() {
        let out = in_parallel((0..8u64).map(|i| move || i * i));
        assert_eq!(out, (0..8u64).map(|i| i * i).collect::<Vec<_>>());
    }
}
