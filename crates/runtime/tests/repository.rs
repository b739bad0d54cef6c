//! `discover` on model repositories built in temporary folders.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use hinfer_runtime::pbtxt::VersionPolicy;
use hinfer_runtime::{discover, RepositoryError, RepositoryModel};

/// A fresh folder under the system's temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!(
            "hinfer-repository-{label}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(unique);
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create a temporary folder");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `contents` to `relative`, creating the folders above it.
    fn write(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create folders");
        }
        fs::write(&path, contents).expect("write a file");
        path
    }

    fn mkdir(&self, relative: &str) {
        fs::create_dir_all(self.0.join(relative)).expect("create a folder");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn versions(model: &RepositoryModel) -> Vec<&str> {
    model.versions.iter().map(|v| v.version.as_str()).collect()
}

fn names(models: &[RepositoryModel]) -> Vec<&str> {
    models.iter().map(|m| m.name.as_str()).collect()
}

fn discover_err(path: &Path) -> RepositoryError {
    match discover(path) {
        Ok(models) => panic!("expected an error, found {models:?}"),
        Err(e) => e,
    }
}

#[test]
fn a_bare_onnx_file_is_one_model_version_1() {
    let dir = TempDir::new("file");
    let file = dir.write("resnet50.onnx", "onnx bytes");
    let models = discover(&file).unwrap();
    assert_eq!(names(&models), ["resnet50"]);
    assert_eq!(versions(&models[0]), ["1"]);
    assert_eq!(models[0].versions[0].path, file);
    assert!(models[0].config.is_none() && models[0].config_path.is_none());
}

#[test]
fn a_triton_repository_serves_the_latest_version_by_default() {
    let dir = TempDir::new("triton");
    for version in ["1", "2", "10"] {
        dir.write(&format!("alpha/{version}/model.onnx"), "");
    }
    dir.write("alpha/labels.txt", "cat\ndog\n");
    dir.mkdir("alpha/0"); // not a version: no leading zeros, no 0
    dir.mkdir("alpha/backup");
    dir.write("beta/config.pbtxt", "name: \"beta\"\nversion_policy: { all: {} }\n");
    dir.write("beta/1/model.onnx", "");
    dir.write("beta/2/model.onnx", "");
    dir.write("README.md", "not a model");
    dir.write("stray.onnx", "ignored next to model folders");
    dir.mkdir(".git/objects");

    let models = discover(dir.path()).unwrap();
    assert_eq!(names(&models), ["alpha", "beta"]);
    assert_eq!(versions(&models[0]), ["10"]);
    assert_eq!(models[0].versions[0].path, dir.path().join("alpha/10/model.onnx"));
    assert!(models[0].config.is_none());
    assert_eq!(versions(&models[1]), ["1", "2"]);
    assert_eq!(models[1].config_path, Some(dir.path().join("beta/config.pbtxt")));
    assert_eq!(
        models[1].config.as_ref().map(|c| &c.version_policy),
        Some(&VersionPolicy::All)
    );
}

#[test]
fn version_policies_select_versions_ascending() {
    let dir = TempDir::new("policies");
    for model in ["latest2", "specific"] {
        for version in ["1", "2", "3", "4"] {
            dir.write(&format!("{model}/{version}/model.onnx"), "");
        }
    }
    dir.write("latest2/config.pbtxt", "version_policy { latest { num_versions: 2 } }");
    // 9 has no folder: a warning, the others are still served.
    dir.write(
        "specific/config.pbtxt",
        "version_policy { specific { versions: [3, 1, 9] } }",
    );
    let models = discover(dir.path()).unwrap();
    assert_eq!(versions(&models[0]), ["3", "4"]);
    assert_eq!(versions(&models[1]), ["1", "3"]);
}

#[test]
fn a_model_folder_given_directly_is_that_one_model() {
    let dir = TempDir::new("model-folder");
    dir.write("vision/resnet/1/model.onnx", "");
    dir.write("vision/resnet/2/model.onnx", "");
    dir.write("vision/other/1/model.onnx", "");
    let models = discover(&dir.path().join("vision/resnet")).unwrap();
    assert_eq!(names(&models), ["resnet"]);
    assert_eq!(versions(&models[0]), ["2"]);

    // A config alone marks a model folder too (and then it lacks versions).
    dir.write("configured/config.pbtxt", "max_batch_size: 4");
    let e = discover_err(&dir.path().join("configured"));
    assert!(
        matches!(e, RepositoryError::NoVersion { ref model, .. } if model == "configured"),
        "{e}"
    );
    assert!(e.to_string().contains("no version folder"), "{e}");
}

#[test]
fn a_folder_of_onnx_files_is_one_model_per_file() {
    let dir = TempDir::new("loose");
    dir.write("mobilenet.onnx", "");
    dir.write("bert.onnx", "");
    dir.write("notes.txt", "");
    let models = discover(dir.path()).unwrap();
    assert_eq!(names(&models), ["bert", "mobilenet"]);
    assert_eq!(versions(&models[1]), ["1"]);
    assert_eq!(models[1].versions[0].path, dir.path().join("mobilenet.onnx"));
}

#[test]
fn model_file_name_and_model_folders_follow_triton() {
    let dir = TempDir::new("filename");
    dir.write("custom/config.pbtxt", "default_model_filename: \"net.onnx\"");
    dir.write("custom/1/net.onnx", "");
    // An ONNX model with external data: model.onnx is a folder.
    dir.write("external/1/model.onnx/model.onnx", "");
    dir.write("external/1/model.onnx/weights.bin", "");
    let models = discover(dir.path()).unwrap();
    assert_eq!(models[0].versions[0].path, dir.path().join("custom/1/net.onnx"));
    assert_eq!(
        models[1].versions[0].path,
        dir.path().join("external/1/model.onnx/model.onnx")
    );
}

#[test]
fn triton_quickstart_config_is_read() {
    let dir = TempDir::new("densenet");
    let fixture = include_str!("fixtures/densenet_onnx.pbtxt");
    dir.write("densenet_onnx/config.pbtxt", fixture);
    dir.write("densenet_onnx/1/model.onnx", "");
    dir.write("densenet_onnx/densenet_labels.txt", "");
    let models = discover(dir.path()).unwrap();
    let config = models[0].config.as_ref().expect("a config");
    assert_eq!(config.max_batch_size, Some(0));
    assert_eq!(config.inputs[0].name, "data_0");
    assert_eq!(config.inputs[0].dims, [3, 224, 224]);
    assert_eq!(config.outputs[0].name, "fc6_1");
    assert_eq!(
        config.ignored,
        [
            "input.format",
            "input.reshape",
            "output.reshape",
            "output.label_filename"
        ]
    );
}

#[test]
fn missing_and_empty_paths_are_errors_naming_them() {
    let dir = TempDir::new("missing");
    let missing = dir.path().join("nope");
    let e = discover_err(&missing);
    assert!(matches!(e, RepositoryError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}");

    let e = discover_err(dir.path());
    assert!(matches!(e, RepositoryError::NoModels { .. }), "{e}");
    assert!(e.to_string().contains(&*dir.path().to_string_lossy()), "{e}");

    let text = dir.write("config.yaml", "");
    assert!(matches!(discover_err(&text), RepositoryError::NotAModel { .. }));

    // A folder of unrelated folders holds no models either.
    dir.mkdir("docs/images");
    assert!(matches!(discover_err(dir.path()), RepositoryError::NoModels { .. }));
}

#[test]
fn bad_configs_are_errors_naming_the_file() {
    let dir = TempDir::new("bad-config");
    dir.write("m/1/model.onnx", "");
    let config = dir.write("m/config.pbtxt", "name: \"m\"\nmax_batch_size: \"eight\"\n");
    let e = discover_err(dir.path());
    assert!(matches!(e, RepositoryError::Config { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 2, column 1: field `max_batch_size` expects a non-negative integer, found \"eight\"",
            config.display()
        )
    );

    fs::write(&config, [0xff, 0xfe, 0x00]).unwrap();
    let e = discover_err(dir.path());
    assert!(
        matches!(e, RepositoryError::Io { ref path, .. } if *path == config),
        "{e}"
    );

    fs::write(&config, "name: \"other\"").unwrap();
    let e = discover_err(dir.path());
    assert!(matches!(e, RepositoryError::NameMismatch { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("\"other\" differs from the model folder's name \"m\""),
        "{e}"
    );

    fs::write(&config, "platform: \"tensorrt_plan\"").unwrap();
    let e = discover_err(dir.path());
    assert!(
        matches!(e, RepositoryError::UnsupportedPlatform { field: "platform", .. }),
        "{e}"
    );
    fs::write(&config, "backend: \"python\"").unwrap();
    assert!(discover_err(dir.path())
        .to_string()
        .contains("backend \"python\" is not supported"));
    fs::write(&config, "backend: \"onnxruntime\" platform: \"onnxruntime_onnx\"").unwrap();
    assert!(discover(dir.path()).is_ok());
}

#[test]
fn unusable_versions_are_errors_naming_the_model() {
    let dir = TempDir::new("versions");
    // The latest version lacks its model file: an error, not a silent fallback to 1.
    dir.write("m/1/model.onnx", "");
    dir.mkdir("m/2");
    let e = discover_err(dir.path());
    assert!(
        matches!(e, RepositoryError::MissingModelFile { ref version, .. } if version == "2"),
        "{e}"
    );
    assert!(e.to_string().starts_with("model \"m\" version 2: "), "{e}");

    fs::write(
        dir.path().join("m/config.pbtxt"),
        "version_policy { specific { versions: 7 } }",
    )
    .unwrap();
    let e = discover_err(dir.path());
    assert!(matches!(e, RepositoryError::NoVersion { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("version_policy specific [7] matches none of the version folders 1, 2"),
        "{e}"
    );
}

#[test]
fn loose_files_differing_only_in_case_collide() {
    let dir = TempDir::new("case");
    dir.write("a.onnx", "");
    dir.write("a.ONNX", "");
    // On a case-insensitive file system the second write replaced the first.
    if fs::read_dir(dir.path()).unwrap().count() == 2 {
        assert!(matches!(
            discover_err(dir.path()),
            RepositoryError::DuplicateModel { .. }
        ));
    }
}
