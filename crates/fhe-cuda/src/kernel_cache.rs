//! On-disk cache of compiled kernel modules (CUBINs), so that only the first process on a
//! machine pays NVRTC's compilation (about a minute for the `ntt` module).
//!
//! - **Where.** `FHE_KERNEL_CACHE` names the folder; `FHE_KERNEL_CACHE=off` turns the cache off.
//!   Unset, it is `$XDG_CACHE_HOME/gpufhe/kernels`, else `$HOME/.cache/gpufhe/kernels`, else off.
//! - **Key.** SHA-256 of the module name, its full source (includes inlined), every NVRTC option
//!   (the architecture among them) and the NVRTC version: an edited kernel, another GPU or
//!   another NVRTC never reuses a stale entry. File `<module>-<key>.cubin`.
//! - **Entry.** A magic, a format version, the payload length and the SHA-256 of the payload,
//!   then the CUBIN. A short, altered or foreign file is a miss (the module is compiled again and
//!   the entry rewritten), never an error and never loaded.
//! - **Writes** go to a unique temporary file renamed into place, so concurrent processes see
//!   either no entry or a whole one. Failing to write only costs the next process a compile.
//!
//! The cache holds code the GPU will run: its folder must be writable only by its user (as the
//! driver's own `~/.nv/ComputeCache`). Folders the cache creates are mode 0700 on Unix; a folder
//! named by `FHE_KERNEL_CACHE` that already exists keeps its permissions. The checksum detects
//! damage, not tampering.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// First bytes of every cache entry.
const MAGIC: &[u8; 8] = b"FHECUBIN";
/// Layout version of an entry (bump when the header changes).
const FORMAT: u32 = 1;
/// Header length: magic, format (u32), payload length (u64), payload SHA-256.
const HEADER: usize = 8 + 4 + 8 + 32;

/// A folder of compiled kernel modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelCache {
    dir: PathBuf,
}

impl KernelCache {
    /// The cache in `dir` (created at the first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The cache chosen by the environment (see the module docs), or `None` when it is off.
    pub fn from_env() -> Option<Self> {
        Self::from_vars(|k| std::env::var_os(k))
    }

    /// [`KernelCache::from_env`] over a given variable lookup.
    fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<Self> {
        let non_empty = |k: &str| var(k).filter(|v| !v.is_empty());
        match non_empty("FHE_KERNEL_CACHE") {
            Some(v) if v == "off" => None,
            Some(v) => Some(Self::at(v)),
            None => non_empty("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| non_empty("HOME").map(|h| Path::new(&h).join(".cache")))
                .map(|base| Self::at(base.join("gpufhe").join("kernels"))),
        }
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of the entry for `module` compiled from `source` with `options` by NVRTC
    /// `nvrtc_version`.
    pub fn entry(
        &self,
        module: &str,
        source: &str,
        options: &[String],
        nvrtc_version: (i32, i32),
    ) -> PathBuf {
        let mut h = Sha256::new();
        for part in [module, source] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update((options.len() as u64).to_le_bytes());
        for o in options {
            h.update((o.len() as u64).to_le_bytes());
            h.update(o.as_bytes());
        }
        h.update(nvrtc_version.0.to_le_bytes());
        h.update(nvrtc_version.1.to_le_bytes());
        self.dir
            .join(format!("{module}-{}.cubin", hex(&h.finalize())))
    }

    /// The CUBIN stored at `entry`, or `None` when it is missing or not a whole, unaltered
    /// entry.
    pub fn load(entry: &Path) -> Option<Vec<u8>> {
        let bytes = std::fs::read(entry).ok()?;
        let (header, payload) = bytes.split_at_checked(HEADER)?;
        let (magic, rest) = header.split_at(8);
        let (format, rest) = rest.split_at(4);
        let (len, sum) = rest.split_at(8);
        let ok = magic == MAGIC
            && u32::from_le_bytes(format.try_into().ok()?) == FORMAT
            && u64::from_le_bytes(len.try_into().ok()?) == payload.len() as u64
            && Sha256::digest(payload).as_slice() == sum;
        ok.then(|| payload.to_vec())
    }

    /// Stores `cubin` at `entry` (creating the folder), through a temporary file renamed into
    /// place.
    pub fn store(entry: &Path, cubin: &[u8]) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = entry
            .parent()
            .ok_or_else(|| std::io::Error::other("cache entry without a folder"))?;
        create_private_dir(dir)?;
        let tmp = dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(MAGIC)?;
            f.write_all(&FORMAT.to_le_bytes())?;
            f.write_all(&(cubin.len() as u64).to_le_bytes())?;
            f.write_all(&Sha256::digest(cubin))?;
            f.write_all(cubin)?;
            f.sync_all()?;
            std::fs::rename(&tmp, entry)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// Creates `dir` and its missing parents; on Unix the folders it creates are private to the
/// user (mode 0700), since the entries are code the GPU runs.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Lower-case hexadecimal of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "gpufhe-kernel-cache-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn opts(arch: &str) -> Vec<String> {
        vec![
            "--device-int128".into(),
            format!("--gpu-architecture={arch}"),
        ]
    }

    #[test]
    fn a_stored_entry_loads_back() {
        let c = KernelCache::at(temp_dir("roundtrip"));
        let e = c.entry("ntt", "src", &opts("sm_90"), (13, 0));
        assert_eq!(KernelCache::load(&e), None);
        let cubin: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        KernelCache::store(&e, &cubin).unwrap();
        assert_eq!(KernelCache::load(&e), Some(cubin.clone()));
        // Overwriting an entry replaces it whole.
        KernelCache::store(&e, &cubin[..10]).unwrap();
        assert_eq!(KernelCache::load(&e).as_deref(), Some(&cubin[..10]));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(c.dir()).unwrap().collect();
        assert_eq!(names.len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(c.dir()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "the created folder is private");
        }
        std::fs::remove_dir_all(c.dir()).unwrap();
    }

    #[test]
    fn every_key_part_changes_the_entry() {
        let c = KernelCache::at("/cache");
        let base = c.entry("ntt", "src", &opts("sm_90"), (13, 0));
        assert!(base.starts_with("/cache"));
        assert!(
            base.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("ntt-")
        );
        for other in [
            c.entry("elementwise", "src", &opts("sm_90"), (13, 0)),
            c.entry("ntt", "src ", &opts("sm_90"), (13, 0)),
            c.entry("ntt", "src", &opts("sm_100"), (13, 0)),
            c.entry("ntt", "src", &opts("sm_90")[..1], (13, 0)),
            c.entry("ntt", "src", &opts("sm_90"), (13, 1)),
            c.entry("ntt", "src", &opts("sm_90"), (12, 0)),
            // Length prefixes keep concatenations apart.
            c.entry("nt", "tsrc", &opts("sm_90"), (13, 0)),
        ] {
            assert_ne!(other.file_name(), base.file_name());
        }
        assert_eq!(c.entry("ntt", "src", &opts("sm_90"), (13, 0)), base);
    }

    #[test]
    fn altered_or_short_entries_are_misses() {
        let c = KernelCache::at(temp_dir("altered"));
        let e = c.entry("ntt", "src", &opts("sm_90"), (13, 0));
        let cubin = vec![0x7fu8; 300];
        KernelCache::store(&e, &cubin).unwrap();
        let good = std::fs::read(&e).unwrap();
        let mut cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            good[..HEADER - 1].to_vec(),
            good[..good.len() - 1].to_vec(),
            [good.as_slice(), &[0]].concat(),
        ];
        // Flip one bit in each header field and in the payload.
        for at in [0, 8, 12, 20, HEADER, good.len() - 1] {
            let mut b = good.clone();
            b[at] ^= 1;
            cases.push(b);
        }
        for bad in cases {
            std::fs::write(&e, &bad).unwrap();
            assert_eq!(KernelCache::load(&e), None, "{} bytes", bad.len());
        }
        std::fs::remove_dir_all(c.dir()).unwrap();
    }

    #[test]
    fn the_environment_chooses_the_folder() {
        // The folder chosen when the environment holds exactly `pairs`.
        let chosen = |pairs: &[(&str, &str)]| {
            KernelCache::from_vars(|k| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            })
            .map(|c| c.dir().to_path_buf())
        };
        type Env<'a> = &'a [(&'a str, &'a str)];
        let table: [(Env, Option<&str>); 5] = [
            (&[("FHE_KERNEL_CACHE", "/k"), ("HOME", "/h")], Some("/k")),
            (&[("FHE_KERNEL_CACHE", "off"), ("HOME", "/h")], None),
            (
                &[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")],
                Some("/x/gpufhe/kernels"),
            ),
            (
                &[("XDG_CACHE_HOME", ""), ("HOME", "/h")],
                Some("/h/.cache/gpufhe/kernels"),
            ),
            (&[], None),
        ];
        for (env, want) in table {
            assert_eq!(chosen(env), want.map(PathBuf::from), "{env:?}");
        }
    }
}
