//! Finding the models that `hinfer serve PATH` should load.
//!
//! [`discover`] accepts four layouts, tried in this order:
//!
//! 1. **A file** `PATH` ending in `.onnx`: one model named by the file stem
//!    (`resnet.onnx` → `resnet`), version `"1"`.
//! 2. **A model folder** (Triton's layout for one model): `PATH` holds version
//!    folders and/or a `config.pbtxt` directly. One model, named by the folder.
//! 3. **A Triton model repository**: `PATH` holds model folders, each laid out as
//!    ```text
//!    <model>/config.pbtxt          optional
//!    <model>/<version>/model.onnx  version: a positive integer without leading zeros
//!    ```
//!    One model per model folder, sorted by name. Other entries at the top are
//!    ignored with a warning, loose `.onnx` files included.
//! 4. **A folder of `.onnx` files** and no model folders (a hinfer convenience, not
//!    Triton's): each `<name>.onnx` is a model `<name>`, version `"1"`.
//!
//! Inside a model folder, as Triton:
//! - The versions served are chosen from the version folders by the config's
//!   `version_policy` (by default the latest only) and listed ascending. A folder
//!   whose name is not a version is ignored with a warning; plain files (Triton
//!   keeps label files there) and the config are ignored silently. A version
//!   listed by a `specific` policy but absent is a warning; serving no version at
//!   all is an error.
//! - The model file is `default_model_filename` from the config, else `model.onnx`;
//!   when that path is a folder (an ONNX model with external data), the model is
//!   the `model.onnx` inside it. A selected version without its model file is an
//!   error.
//! - The config's `name`, when given, must equal the folder's name, and its
//!   `platform`/`backend`, when given, must be ONNX Runtime's
//!   (`onnxruntime_onnx`/`onnxruntime`): hinfer serves ONNX models only.
//!
//! Entries whose name starts with `.` are skipped everywhere. Nothing here opens
//! the `.onnx` files; fields of the config that hinfer does not honour are listed
//! in [`ModelConfigFile::ignored`] for the caller to report.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::pbtxt::{parse_model_config, ModelConfigFile, PbtxtError, VersionPolicy};

/// The name of a model folder's configuration file.
pub const CONFIG_FILE_NAME: &str = "config.pbtxt";
/// The model file in a version folder when the config names none.
pub const DEFAULT_MODEL_FILE_NAME: &str = "model.onnx";
/// The only `platform` a config may name.
pub const ONNX_PLATFORM: &str = "onnxruntime_onnx";
/// The only `backend` a config may name.
pub const ONNX_BACKEND: &str = "onnxruntime";

/// A model found by [`discover`].
#[derive(Debug, Clone, PartialEq)]
pub struct RepositoryModel {
    /// The model's name: its folder's name or its file's stem.
    pub name: String,
    /// The versions to serve, ascending; never empty.
    pub versions: Vec<ModelVersion>,
    /// The parsed `config.pbtxt`, when the model folder has one.
    pub config: Option<ModelConfigFile>,
    /// Where `config` was read from.
    pub config_path: Option<PathBuf>,
}

/// One version of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelVersion {
    /// The version folder's name, e.g. `"3"` (`"1"` for a bare `.onnx` file).
    pub version: String,
    /// The `.onnx` file to load.
    pub path: PathBuf,
}

/// Why a path could not be turned into models to serve; each names the path.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// The path does not exist.
    #[error("{}: no such file or folder", path.display())]
    NotFound { path: PathBuf },

    /// Reading a folder, file or its metadata failed.
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },

    /// The path is a file, but not an `.onnx` one.
    #[error("{} is neither an .onnx file nor a folder", path.display())]
    NotAModel { path: PathBuf },

    /// A folder in which no layout applies (empty, or nothing usable).
    #[error(
        "no models in {}: expected <model>/<version>/model.onnx (a Triton repository), \
         <version>/model.onnx (one model folder) or *.onnx files",
        path.display()
    )]
    NoModels { path: PathBuf },

    /// A `config.pbtxt` that does not parse.
    #[error("{}: {source}", path.display())]
    Config { path: PathBuf, source: PbtxtError },

    /// The config's `name` differs from its folder's name.
    #[error(
        "{}: name \"{config_name}\" differs from the model folder's name \"{folder}\" \
         (Triton requires them to be equal)",
        path.display()
    )]
    NameMismatch {
        path: PathBuf,
        folder: String,
        config_name: String,
    },

    /// The config asks for a platform or backend other than ONNX Runtime.
    #[error(
        "{}: {field} \"{value}\" is not supported; hinfer serves ONNX models \
         (platform \"{ONNX_PLATFORM}\", backend \"{ONNX_BACKEND}\")",
        path.display()
    )]
    UnsupportedPlatform {
        path: PathBuf,
        field: &'static str,
        value: String,
    },

    /// A model folder from which no version can be served.
    #[error("model \"{model}\" in {} has no usable version: {reason}", path.display())]
    NoVersion {
        model: String,
        path: PathBuf,
        reason: String,
    },

    /// A selected version folder lacks its model file.
    #[error("model \"{model}\" version {version}: {} not found", path.display())]
    MissingModelFile {
        model: String,
        version: String,
        path: PathBuf,
    },

    /// Two models with one name (`a.onnx` and `a.ONNX`).
    #[error("two models are named \"{name}\": {} and {}", first.display(), second.display())]
    DuplicateModel {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },

    /// A model name that is not UTF-8 (or a path with no name, such as `/`).
    #[error("{}: cannot name a model after this path", path.display())]
    InvalidName { path: PathBuf },
}

type Result<T, E = RepositoryError> = std::result::Result<T, E>;

/// The models to serve from `path`, sorted by name and never empty; see the
/// module documentation for the layouts accepted.
pub fn discover(path: &Path) -> Result<Vec<RepositoryModel>> {
    let meta = metadata(path)?;
    if !meta.is_dir() {
        return if meta.is_file() && has_onnx_extension(path) {
            Ok(vec![single_file(path)?])
        } else {
            Err(RepositoryError::NotAModel {
                path: path.to_path_buf(),
            })
        };
    }
    let entries = read_entries(path)?;
    if is_model_folder(&entries) {
        return Ok(vec![load_model(&folder_name(path)?, path, &entries)?]);
    }

    let mut model_folders = Vec::new();
    let mut onnx_files = Vec::new();
    let mut others = Vec::new();
    for entry in entries {
        if entry.is_dir {
            let inner = read_entries(&entry.path)?;
            if is_model_folder(&inner) {
                model_folders.push((entry, inner));
                continue;
            }
        } else if entry.is_file && has_onnx_extension(&entry.path) {
            onnx_files.push(entry);
            continue;
        }
        others.push(entry);
    }

    let models = if !model_folders.is_empty() {
        for entry in &onnx_files {
            tracing::warn!(
                path = %entry.path.display(),
                "ignoring an .onnx file next to model folders; move it into <model>/1/model.onnx to serve it"
            );
        }
        for entry in &others {
            tracing::warn!(path = %entry.path.display(), "ignoring an entry that is not a model folder");
        }
        model_folders
            .iter()
            .map(|(entry, inner)| load_model(&entry.name, &entry.path, inner))
            .collect::<Result<Vec<_>>>()?
    } else if !onnx_files.is_empty() {
        for entry in &others {
            tracing::warn!(path = %entry.path.display(), "ignoring an entry that is not an .onnx file");
        }
        let models = onnx_files
            .iter()
            .map(|entry| single_file(&entry.path))
            .collect::<Result<Vec<_>>>()?;
        reject_duplicates(&models)?;
        models
    } else {
        return Err(RepositoryError::NoModels {
            path: path.to_path_buf(),
        });
    };
    Ok(models)
}

/// One entry of a folder, symlinks followed.
#[derive(Debug)]
struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
    is_file: bool,
}

fn io_error(path: &Path, source: io::Error) -> RepositoryError {
    RepositoryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn metadata(path: &Path) -> Result<fs::Metadata> {
    fs::metadata(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => RepositoryError::NotFound {
            path: path.to_path_buf(),
        },
        _ => io_error(path, source),
    })
}

/// The entries of `folder`, sorted by name; hidden ones, names that are not
/// UTF-8 and dangling links are skipped (the latter two with a warning).
fn read_entries(folder: &Path) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(folder).map_err(|e| io_error(folder, e))? {
        let entry = entry.map_err(|e| io_error(folder, e))?;
        let path = entry.path();
        let Ok(name) = entry.file_name().into_string() else {
            tracing::warn!(path = %path.display(), "ignoring an entry whose name is not UTF-8");
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::warn!(path = %path.display(), "ignoring a link to nothing");
                continue;
            }
            Err(e) => return Err(io_error(&path, e)),
        };
        entries.push(Entry {
            name,
            path,
            is_dir: meta.is_dir(),
            is_file: meta.is_file(),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// A version folder's number: a positive integer written without leading zeros.
fn version_number(name: &str) -> Option<u64> {
    if name.starts_with('0') || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

/// Whether a folder with these entries is one model (Triton's model folder).
fn is_model_folder(entries: &[Entry]) -> bool {
    entries
        .iter()
        .any(|e| (e.is_file && e.name == CONFIG_FILE_NAME) || (e.is_dir && version_number(&e.name).is_some()))
}

fn has_onnx_extension(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("onnx"))
}

/// The name of the folder `path`, resolving `.` and `..`.
fn folder_name(path: &Path) -> Result<String> {
    let named = match path.file_name() {
        Some(name) => Some(name.to_os_string()),
        None => fs::canonicalize(path)
            .map_err(|e| io_error(path, e))?
            .file_name()
            .map(|name| name.to_os_string()),
    };
    named
        .and_then(|name| name.into_string().ok())
        .ok_or_else(|| RepositoryError::InvalidName {
            path: path.to_path_buf(),
        })
}

/// A bare `.onnx` file: a model named by its stem, version 1.
fn single_file(path: &Path) -> Result<RepositoryModel> {
    let name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .ok_or_else(|| RepositoryError::InvalidName {
            path: path.to_path_buf(),
        })?;
    Ok(RepositoryModel {
        name: name.to_string(),
        versions: vec![ModelVersion {
            version: "1".to_string(),
            path: path.to_path_buf(),
        }],
        config: None,
        config_path: None,
    })
}

fn reject_duplicates(models: &[RepositoryModel]) -> Result<()> {
    for (i, model) in models.iter().enumerate() {
        if let Some(first) = models[..i].iter().find(|m| m.name == model.name) {
            let path_of = |m: &RepositoryModel| m.versions.first().map(|v| v.path.clone()).unwrap_or_default();
            return Err(RepositoryError::DuplicateModel {
                name: model.name.clone(),
                first: path_of(first),
                second: path_of(model),
            });
        }
    }
    Ok(())
}

fn read_config(path: &Path) -> Result<ModelConfigFile> {
    let text = fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_model_config(&text).map_err(|source| RepositoryError::Config {
        path: path.to_path_buf(),
        source,
    })
}

/// Checks the config's name and platform against the folder `name`.
fn check_config(name: &str, config: &ModelConfigFile, config_path: &Path) -> Result<()> {
    if let Some(config_name) = &config.name {
        if config_name != name {
            return Err(RepositoryError::NameMismatch {
                path: config_path.to_path_buf(),
                folder: name.to_string(),
                config_name: config_name.clone(),
            });
        }
    }
    let checks = [
        ("platform", &config.platform, ONNX_PLATFORM),
        ("backend", &config.backend, ONNX_BACKEND),
    ];
    for (field, value, supported) in checks {
        if let Some(value) = value {
            if value != supported {
                return Err(RepositoryError::UnsupportedPlatform {
                    path: config_path.to_path_buf(),
                    field,
                    value: value.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The model in folder `dir` (whose entries are `entries`), named `name`.
fn load_model(name: &str, dir: &Path, entries: &[Entry]) -> Result<RepositoryModel> {
    let config_path = entries
        .iter()
        .find(|e| e.is_file && e.name == CONFIG_FILE_NAME)
        .map(|e| e.path.clone());
    let config = match &config_path {
        Some(path) => {
            let config = read_config(path)?;
            check_config(name, &config, path)?;
            Some(config)
        }
        None => None,
    };

    let mut available = Vec::new();
    for entry in entries {
        match version_number(&entry.name) {
            Some(version) if entry.is_dir => available.push(version),
            _ if entry.is_dir => tracing::warn!(
                model = name,
                path = %entry.path.display(),
                "ignoring a folder that is not a version (a positive integer)"
            ),
            _ => {}
        }
    }
    let no_version = |reason: String| RepositoryError::NoVersion {
        model: name.to_string(),
        path: dir.to_path_buf(),
        reason,
    };
    if available.is_empty() {
        return Err(no_version(format!(
            "no version folder (expected {}/<version>/{DEFAULT_MODEL_FILE_NAME})",
            dir.display()
        )));
    }

    let default_policy = VersionPolicy::default();
    let policy = config.as_ref().map_or(&default_policy, |c| &c.version_policy);
    let selected = policy.select(&available);
    if let VersionPolicy::Specific(wanted) = policy {
        for version in wanted.iter().filter(|v| !available.contains(v)) {
            tracing::warn!(
                model = name,
                version,
                "version_policy lists a version that has no folder"
            );
        }
    }
    if selected.is_empty() {
        let mut found = available.clone();
        found.sort_unstable();
        let found: Vec<String> = found.iter().map(u64::to_string).collect();
        return Err(no_version(format!(
            "version_policy {policy} matches none of the version folders {}",
            found.join(", ")
        )));
    }

    let file_name = config
        .as_ref()
        .and_then(|c| c.default_model_filename.as_deref())
        .unwrap_or(DEFAULT_MODEL_FILE_NAME);
    let versions = selected
        .into_iter()
        .map(|version| {
            let version = version.to_string();
            let path = model_file(name, &version, &dir.join(&version).join(file_name))?;
            Ok(ModelVersion { version, path })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RepositoryModel {
        name: name.to_string(),
        versions,
        config,
        config_path,
    })
}

/// The file to load for `candidate`: itself, or `model.onnx` inside it when it is
/// a folder (Triton's ONNX Runtime backend does the same).
fn model_file(model: &str, version: &str, candidate: &Path) -> Result<PathBuf> {
    let missing = |path: PathBuf| RepositoryError::MissingModelFile {
        model: model.to_string(),
        version: version.to_string(),
        path,
    };
    let path = match fs::metadata(candidate) {
        Ok(meta) if meta.is_dir() => candidate.join(DEFAULT_MODEL_FILE_NAME),
        Ok(_) => candidate.to_path_buf(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing(candidate.to_path_buf())),
        Err(e) => return Err(io_error(candidate, e)),
    };
    match fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(missing(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(missing(path)),
        Err(e) => Err(io_error(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_folder_names() {
        assert_eq!(version_number("1"), Some(1));
        assert_eq!(version_number("42"), Some(42));
        assert_eq!(version_number("0"), None);
        assert_eq!(version_number("01"), None);
        assert_eq!(version_number(""), None);
        assert_eq!(version_number("v1"), None);
        assert_eq!(version_number("-1"), None);
        assert_eq!(version_number("99999999999999999999999"), None);
    }

    #[test]
    fn onnx_extension_is_case_insensitive() {
        assert!(has_onnx_extension(Path::new("a/b.onnx")));
        assert!(has_onnx_extension(Path::new("B.ONNX")));
        assert!(!has_onnx_extension(Path::new("b.onnx.txt")));
        assert!(!has_onnx_extension(Path::new("onnx")));
    }
}
