//! Finding `libonnxruntime.so` on this machine.
//!
//! Search order, first hit wins:
//! 1. `ORT_DYLIB_PATH` (a file, or a folder holding the library); when it is set,
//!    nothing else is tried, so a wrong setting is reported, not silently replaced;
//! 2. the installed `onnxruntime` (or `onnxruntime-gpu`) Python package,
//!    `onnxruntime/capi/libonnxruntime.so.*`, in the site-packages of `python3`
//!    (or `$HINFER_PYTHON`), of `$VIRTUAL_ENV`, and of `$PYTHONPATH` entries;
//! 3. the system library path (`$LD_LIBRARY_PATH`, `/usr/local/lib`, `/usr/lib`, ...).
//!
//! Every place looked at is recorded, so that "not found" can say exactly where
//! hinfer searched.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a library was found, or every place that was searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibrarySearch {
    /// The library file and how it was found.
    Found { path: PathBuf, via: &'static str },
    /// Nothing found; one line per place searched.
    NotFound { searched: Vec<String> },
}

impl LibrarySearch {
    /// The message for a failed search, naming every place searched and the fixes.
    pub fn not_found_reason(searched: &[String]) -> String {
        format!(
            "libonnxruntime.so was not found. Searched: {}. Install it with `pip install onnxruntime` \
             or point ORT_DYLIB_PATH at the library file",
            searched.join("; ")
        )
    }
}

/// Searches for the ONNX Runtime shared library in hinfer's documented order.
pub fn find_onnxruntime() -> LibrarySearch {
    let mut searched = Vec::new();
    if let Some(value) = std::env::var_os("ORT_DYLIB_PATH").filter(|v| !v.is_empty()) {
        // An explicit setting is obeyed or reported, never silently replaced by another library.
        let path = PathBuf::from(&value);
        return match library_in(&path) {
            Some(found) => LibrarySearch::Found {
                path: found,
                via: "ORT_DYLIB_PATH",
            },
            None => LibrarySearch::NotFound {
                searched: vec![format!(
                    "ORT_DYLIB_PATH={} (no such file, nor a folder holding libonnxruntime.so*)",
                    path.display()
                )],
            },
        };
    }
    for site in python_site_dirs() {
        for package in ["onnxruntime", "onnxruntime_gpu"] {
            let capi = site.join(package).join("capi");
            if let Some(found) = library_in(&capi) {
                return LibrarySearch::Found {
                    path: found,
                    via: "the onnxruntime Python package",
                };
            }
        }
        searched.push(format!("{}/onnxruntime/capi", site.display()));
    }
    for dir in system_dirs() {
        if let Some(found) = library_in(&dir) {
            return LibrarySearch::Found {
                path: found,
                via: "the system library path",
            };
        }
        searched.push(dir.display().to_string());
    }
    LibrarySearch::NotFound { searched }
}

/// The library at `path` if it is a file, or the best `libonnxruntime.so*` in it
/// if it is a folder (the plain `.so` first, then the highest versioned one).
pub fn library_in(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let plain = path.join("libonnxruntime.so");
    if plain.is_file() {
        return Some(plain);
    }
    let mut versioned: Vec<PathBuf> = std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libonnxruntime.so."))
        })
        .collect();
    versioned.sort();
    versioned.pop()
}

/// site-packages folders of the Python environments hinfer knows about.
fn python_site_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        if let Ok(entries) = std::fs::read_dir(Path::new(&venv).join("lib")) {
            dirs.extend(entries.filter_map(|e| e.ok()).map(|e| e.path().join("site-packages")));
        }
    }
    if let Some(pp) = std::env::var_os("PYTHONPATH") {
        dirs.extend(std::env::split_paths(&pp));
    }
    let python = std::env::var("HINFER_PYTHON").unwrap_or_else(|_| "python3".into());
    let script =
        "import site, sys; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))";
    if let Ok(out) = Command::new(&python).args(["-c", script]).output() {
        if out.status.success() {
            dirs.extend(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(PathBuf::from),
            );
        }
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| d.is_dir() && seen.insert(d.clone()));
    dirs
}

fn system_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    dirs.extend(
        [
            "/usr/local/lib",
            "/usr/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
        ]
        .into_iter()
        .map(PathBuf::from),
    );
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_plain_then_highest_versioned_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(library_in(dir.path()), None);
        std::fs::write(dir.path().join("libonnxruntime.so.1.20.0"), b"").unwrap();
        std::fs::write(dir.path().join("libonnxruntime.so.1.32.0"), b"").unwrap();
        std::fs::write(dir.path().join("libonnxruntime_providers_shared.so"), b"").unwrap();
        assert_eq!(
            library_in(dir.path()),
            Some(dir.path().join("libonnxruntime.so.1.32.0"))
        );
        std::fs::write(dir.path().join("libonnxruntime.so"), b"").unwrap();
        assert_eq!(library_in(dir.path()), Some(dir.path().join("libonnxruntime.so")));
        let file = dir.path().join("libonnxruntime.so.1.20.0");
        assert_eq!(library_in(&file), Some(file));
    }

    #[test]
    fn not_found_message_lists_places() {
        let msg = LibrarySearch::not_found_reason(&["/a".into(), "/b".into()]);
        assert!(msg.contains("/a; /b") && msg.contains("ORT_DYLIB_PATH"), "{msg}");
    }
}
