//! The part of Triton's `config.pbtxt` that hinfer honours.
//!
//! A `config.pbtxt` is a `ModelConfig` protobuf message in protobuf *text format*:
//!
//! ```text
//! name: "resnet"                      # a comment
//! platform: "onnxruntime_onnx"
//! max_batch_size: 8
//! input [ { name: "x", data_type: TYPE_FP32, dims: [ 3, -1, -1 ] } ]
//! output { name: "y" data_type: TYPE_FP32 dims: [ 1000 ] }
//! dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }
//! ```
//!
//! [`parse_model_config`] reads the text in two steps: a tokenizer and a recursive
//! parser build a generic tree of fields (so any valid text format parses, whatever
//! its fields), then the tree is mapped onto [`ModelConfigFile`]. The syntax
//! accepted is the text format's: `field: value`, `field { ... }` or `field: { ... }`
//! (or `< ... >`), lists `field: [ a, b ]` (of scalars or of messages), repeated
//! fields by repetition, optional `,` or `;` after a field, `#` comments, strings
//! in double or single quotes with C escapes (adjacent strings are joined), enum
//! values as bare identifiers, and numbers (possibly negative, decimal or `0x` hex).
//!
//! Fields hinfer honours: `name`, `platform`, `backend`, `default_model_filename`,
//! `max_batch_size`, `input`/`output` (`name`, `data_type`, `dims`),
//! `dynamic_batching` (`preferred_batch_size`, `max_queue_delay_microseconds`,
//! `priority_levels`, `default_priority_level`, `default_queue_policy`),
//! `instance_group[].count` and `version_policy`. Every other field is skipped and
//! its dotted path (`optimization`, `input.reshape`, `instance_group.kind`) recorded
//! in [`ModelConfigFile::ignored`], so the caller can say what it does not honour.
//!
//! A field of the wrong type (`max_batch_size: "eight"`), a singular field given
//! twice, an unknown enum value (`data_type: TYPE_FP23`) or a value Triton would
//! reject (`preferred_batch_size` above `max_batch_size`) is a [`PbtxtError`] that
//! names the field and its line and column.

use std::fmt;

mod text_format;

#[cfg(test)]
use text_format::MAX_DEPTH;
use text_format::{Field, Scalar, Value};

/// The model configuration read from a `config.pbtxt`.
///
/// `None` and empty fields were absent from the file; Triton's defaults apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelConfigFile {
    /// `name`; Triton requires it to equal the model folder's name.
    pub name: Option<String>,
    /// `platform`, e.g. `"onnxruntime_onnx"`.
    pub platform: Option<String>,
    /// `backend`, e.g. `"onnxruntime"`.
    pub backend: Option<String>,
    /// `default_model_filename`: the model file in each version folder (Triton's
    /// default for ONNX is `model.onnx`).
    pub default_model_filename: Option<String>,
    /// `max_batch_size`; `Some(0)` means the model takes no batch dimension.
    pub max_batch_size: Option<usize>,
    /// `dynamic_batching`; `Some` whenever the block is present, even empty.
    pub dynamic_batching: Option<DynamicBatching>,
    /// The sum of `instance_group[].count` (a group without `count` counts 1);
    /// `None` when there is no `instance_group`.
    pub instance_count: Option<usize>,
    /// `version_policy`; Triton's default is the latest version only.
    pub version_policy: VersionPolicy,
    /// `input` entries, in file order.
    pub inputs: Vec<IoConfig>,
    /// `output` entries, in file order.
    pub outputs: Vec<IoConfig>,
    /// Dotted paths of the fields present but not honoured, each once, in file order.
    pub ignored: Vec<String>,
}

/// One `input` or `output` of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoConfig {
    /// The tensor's name (required).
    pub name: String,
    /// Triton's data type name, e.g. `"TYPE_FP32"` (required, one of [`DATA_TYPES`]).
    pub data_type: String,
    /// Dimensions without the batch dimension; `-1` is variable.
    pub dims: Vec<i64>,
}

/// `dynamic_batching`, with Triton's defaults for absent fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicBatching {
    /// Batch sizes the batcher should aim for; each at most `max_batch_size`.
    pub preferred_batch_size: Vec<usize>,
    /// How long a request may wait for a batch to fill (0: no waiting).
    pub max_queue_delay_microseconds: u64,
    /// The number of priority levels (0: priorities are off).
    pub priority_levels: u32,
    /// The level of a request that names none; in `1..=priority_levels` when
    /// priorities are on.
    pub default_priority_level: u32,
    /// `default_queue_policy`, when given.
    pub default_queue_policy: Option<QueuePolicy>,
}

/// `ModelQueuePolicy`: how a queue treats waiting requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuePolicy {
    /// The most requests waiting (0: unbounded).
    pub max_queue_size: u64,
    /// A request's timeout when it names none (0: none).
    pub default_timeout_microseconds: u64,
    /// Whether a request may set its own timeout.
    pub allow_timeout_override: bool,
    /// `"REJECT"` (the default) or `"DELAY"`.
    pub timeout_action: String,
}

impl Default for QueuePolicy {
    fn default() -> Self {
        Self {
            max_queue_size: 0,
            default_timeout_microseconds: 0,
            allow_timeout_override: false,
            timeout_action: "REJECT".to_string(),
        }
    }
}

/// Which version folders of a model are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionPolicy {
    /// The `num_versions` highest versions (at least 1).
    Latest { num_versions: usize },
    /// Every version.
    All,
    /// The listed versions (non-empty, ascending, each at least 1).
    Specific(Vec<u64>),
}

impl Default for VersionPolicy {
    fn default() -> Self {
        VersionPolicy::Latest { num_versions: 1 }
    }
}

impl VersionPolicy {
    /// The versions of `available` this policy serves, ascending and without
    /// repeats. Listed versions that are not available are left out.
    pub fn select(&self, available: &[u64]) -> Vec<u64> {
        let mut all = available.to_vec();
        all.sort_unstable();
        all.dedup();
        match self {
            VersionPolicy::Latest { num_versions } => {
                let skip = all.len().saturating_sub(*num_versions);
                all.split_off(skip)
            }
            VersionPolicy::All => all,
            VersionPolicy::Specific(wanted) => all.into_iter().filter(|v| wanted.contains(v)).collect(),
        }
    }
}

impl fmt::Display for VersionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionPolicy::Latest { num_versions } => write!(f, "latest {num_versions}"),
            VersionPolicy::All => write!(f, "all"),
            VersionPolicy::Specific(versions) => {
                let list: Vec<String> = versions.iter().map(u64::to_string).collect();
                write!(f, "specific [{}]", list.join(", "))
            }
        }
    }
}

/// Triton's `DataType` names accepted in `data_type`.
pub const DATA_TYPES: &[&str] = &[
    "TYPE_BOOL",
    "TYPE_UINT8",
    "TYPE_UINT16",
    "TYPE_UINT32",
    "TYPE_UINT64",
    "TYPE_INT8",
    "TYPE_INT16",
    "TYPE_INT32",
    "TYPE_INT64",
    "TYPE_FP16",
    "TYPE_FP32",
    "TYPE_FP64",
    "TYPE_STRING",
    "TYPE_BF16",
];

/// Triton's `TimeoutAction` names accepted in `timeout_action`.
const TIMEOUT_ACTIONS: &[&str] = &["REJECT", "DELAY"];

/// Where something is in the text: 1-based line and column, counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What is wrong with a `config.pbtxt`; every variant says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PbtxtError {
    /// The text is not protobuf text format.
    #[error("{at}: expected {expected}, found {found}")]
    Syntax {
        at: Position,
        expected: String,
        found: String,
    },
    /// A field holds a value of the wrong type.
    #[error("{at}: field `{field}` expects {expected}, found {found}")]
    WrongType {
        at: Position,
        field: String,
        expected: String,
        found: String,
    },
    /// A singular field appears more than once.
    #[error("{at}: field `{field}` is given more than once")]
    Duplicate { at: Position, field: String },
    /// A required field is missing from a message.
    #[error("{at}: `{message}` has no `{field}`")]
    Missing {
        at: Position,
        message: String,
        field: String,
    },
    /// The value is well-typed but not a valid model configuration.
    #[error("{at}: field `{field}`: {reason}")]
    Invalid {
        at: Position,
        field: String,
        reason: String,
    },
}

impl PbtxtError {
    /// Where in the text the error is.
    pub fn position(&self) -> Position {
        match self {
            PbtxtError::Syntax { at, .. }
            | PbtxtError::WrongType { at, .. }
            | PbtxtError::Duplicate { at, .. }
            | PbtxtError::Missing { at, .. }
            | PbtxtError::Invalid { at, .. } => *at,
        }
    }
}

pub(crate) type Result<T, E = PbtxtError> = std::result::Result<T, E>;

/// Parses the text of a `config.pbtxt`.
///
/// Fails on the first syntax error, wrongly typed or repeated field, unknown enum
/// value, or value Triton would reject; unknown fields are recorded, not errors.
pub fn parse_model_config(text: &str) -> Result<ModelConfigFile> {
    model_config(&text_format::parse(text)?)
}

// ---------------------------------------------------------------- mapping

/// `parent.name`, or `name` at the top level.
fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

/// Dotted paths of skipped fields, each once.
#[derive(Default)]
struct Ignored(Vec<String>);

impl Ignored {
    fn add(&mut self, path: String) {
        if !self.0.contains(&path) {
            self.0.push(path);
        }
    }
}

/// The singular fields seen so far in one message.
#[derive(Default)]
struct Seen<'a>(Vec<&'a str>);

impl<'a> Seen<'a> {
    fn once(&mut self, field: &'a Field, path: &str) -> Result<()> {
        if self.0.contains(&field.name.as_str()) {
            return Err(PbtxtError::Duplicate {
                at: field.at,
                field: path.to_string(),
            });
        }
        self.0.push(&field.name);
        Ok(())
    }
}

fn wrong_type(field: &Field, path: &str, expected: &str) -> PbtxtError {
    let found = match &field.value {
        Value::Scalar(s) if s.quoted => format!("{:?}", s.text),
        Value::Scalar(s) => format!("`{}`", s.text),
        Value::Message(_) => "a message".to_string(),
    };
    PbtxtError::WrongType {
        at: field.at,
        field: path.to_string(),
        expected: expected.to_string(),
        found,
    }
}

fn invalid(field: &Field, path: &str, reason: impl Into<String>) -> PbtxtError {
    PbtxtError::Invalid {
        at: field.at,
        field: path.to_string(),
        reason: reason.into(),
    }
}

/// The unquoted text of a scalar field, or `None`.
fn bare(field: &Field) -> Option<&str> {
    match &field.value {
        Value::Scalar(Scalar { text, quoted: false }) => Some(text),
        _ => None,
    }
}

fn string(field: &Field, path: &str) -> Result<String> {
    match &field.value {
        Value::Scalar(Scalar { text, quoted: true }) => Ok(text.clone()),
        _ => Err(wrong_type(field, path, "a quoted string")),
    }
}

fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

fn unsigned<T: TryFrom<u64>>(field: &Field, path: &str) -> Result<T> {
    bare(field)
        .and_then(parse_u64)
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| wrong_type(field, path, "a non-negative integer"))
}

fn signed(field: &Field, path: &str) -> Result<i64> {
    let parse = |text: &str| match text.strip_prefix('-') {
        Some(magnitude) => i64::try_from(-i128::from(parse_u64(magnitude)?)).ok(),
        None => i64::try_from(parse_u64(text)?).ok(),
    };
    bare(field)
        .and_then(parse)
        .ok_or_else(|| wrong_type(field, path, "an integer"))
}

fn boolean(field: &Field, path: &str) -> Result<bool> {
    match bare(field) {
        Some("true" | "True" | "t" | "1") => Ok(true),
        Some("false" | "False" | "f" | "0") => Ok(false),
        _ => Err(wrong_type(field, path, "true or false")),
    }
}

fn enumeration(field: &Field, path: &str, allowed: &[&str]) -> Result<String> {
    match bare(field) {
        Some(name) if allowed.contains(&name) => Ok(name.to_string()),
        _ => Err(wrong_type(field, path, &format!("one of {}", allowed.join(", ")))),
    }
}

fn message<'a>(field: &'a Field, path: &str) -> Result<&'a [Field]> {
    match &field.value {
        Value::Message(fields) => Ok(fields),
        Value::Scalar(_) => Err(wrong_type(field, path, "a message { ... }")),
    }
}

fn model_config(root: &[Field]) -> Result<ModelConfigFile> {
    let mut config = ModelConfigFile::default();
    let mut ignored = Ignored::default();
    let mut seen = Seen::default();
    let mut max_batch_field = None;
    let mut batching_field = None;
    for field in root {
        let path = field.name.as_str();
        match path {
            "name" | "platform" | "backend" | "default_model_filename" => {
                seen.once(field, path)?;
                let value = Some(string(field, path)?);
                match path {
                    "name" => config.name = value,
                    "platform" => config.platform = value,
                    "backend" => config.backend = value,
                    _ => config.default_model_filename = value,
                }
            }
            "max_batch_size" => {
                seen.once(field, path)?;
                config.max_batch_size = Some(unsigned(field, path)?);
                max_batch_field = Some(field);
            }
            "dynamic_batching" => {
                seen.once(field, path)?;
                config.dynamic_batching = Some(dynamic_batching(field, path, &mut ignored)?);
                batching_field = Some(field);
            }
            "instance_group" => {
                let count = instance_group(message(field, path)?, path, &mut ignored)?;
                config.instance_count = Some(config.instance_count.unwrap_or(0).saturating_add(count));
            }
            "version_policy" => {
                seen.once(field, path)?;
                config.version_policy = version_policy(message(field, path)?, path, &mut ignored)?;
            }
            "input" => config.inputs.push(io_config(field, path, &mut ignored)?),
            "output" => config.outputs.push(io_config(field, path, &mut ignored)?),
            _ => ignored.add(path.to_string()),
        }
    }
    if let (Some(batching), Some(field), Some(max), Some(limit)) = (
        &config.dynamic_batching,
        batching_field,
        max_batch_field,
        config.max_batch_size,
    ) {
        if let Some(too_big) = batching.preferred_batch_size.iter().find(|&&size| size > limit) {
            return Err(invalid(
                field,
                "dynamic_batching.preferred_batch_size",
                format!("{too_big} exceeds max_batch_size {limit} (set at {})", max.at),
            ));
        }
    }
    config.ignored = ignored.0;
    Ok(config)
}

/// One `input` or `output`.
fn io_config(field: &Field, path: &str, ignored: &mut Ignored) -> Result<IoConfig> {
    let mut seen = Seen::default();
    let (mut name, mut data_type, mut dims) = (None, None, Vec::new());
    for inner in message(field, path)? {
        let inner_path = join(path, &inner.name);
        match inner.name.as_str() {
            "name" => {
                seen.once(inner, &inner_path)?;
                name = Some(string(inner, &inner_path)?);
            }
            "data_type" => {
                seen.once(inner, &inner_path)?;
                data_type = Some(enumeration(inner, &inner_path, DATA_TYPES)?);
            }
            "dims" => {
                let dim = signed(inner, &inner_path)?;
                if dim < -1 {
                    return Err(invalid(
                        inner,
                        &inner_path,
                        format!("{dim} is not a dimension (use -1 for a variable one)"),
                    ));
                }
                dims.push(dim);
            }
            _ => ignored.add(inner_path),
        }
    }
    let missing = |what: &str| PbtxtError::Missing {
        at: field.at,
        message: path.to_string(),
        field: what.to_string(),
    };
    Ok(IoConfig {
        name: name.ok_or_else(|| missing("name"))?,
        data_type: data_type.ok_or_else(|| missing("data_type"))?,
        dims,
    })
}

fn dynamic_batching(block: &Field, path: &str, ignored: &mut Ignored) -> Result<DynamicBatching> {
    let fields = message(block, path)?;
    let mut batching = DynamicBatching::default();
    let mut seen = Seen::default();
    let mut default_level_field = None;
    for field in fields {
        let inner_path = join(path, &field.name);
        match field.name.as_str() {
            "preferred_batch_size" => {
                let size = unsigned(field, &inner_path)?;
                if size == 0 {
                    return Err(invalid(field, &inner_path, "a batch size is at least 1"));
                }
                batching.preferred_batch_size.push(size);
            }
            "max_queue_delay_microseconds" => {
                seen.once(field, &inner_path)?;
                batching.max_queue_delay_microseconds = unsigned(field, &inner_path)?;
            }
            "priority_levels" => {
                seen.once(field, &inner_path)?;
                batching.priority_levels = unsigned(field, &inner_path)?;
            }
            "default_priority_level" => {
                seen.once(field, &inner_path)?;
                batching.default_priority_level = unsigned(field, &inner_path)?;
                default_level_field = Some((field, inner_path));
            }
            "default_queue_policy" => {
                seen.once(field, &inner_path)?;
                let policy = queue_policy(message(field, &inner_path)?, &inner_path, ignored)?;
                batching.default_queue_policy = Some(policy);
            }
            _ => ignored.add(inner_path),
        }
    }
    let levels = batching.priority_levels;
    let level = batching.default_priority_level;
    if let Some((field, inner_path)) = default_level_field {
        if (levels == 0 && level != 0) || (levels > 0 && !(1..=levels).contains(&level)) {
            return Err(invalid(
                field,
                &inner_path,
                format!("{level} is outside 1..={levels} (priority_levels)"),
            ));
        }
    } else if levels > 0 {
        // Triton requires a default level once priorities are on.
        return Err(PbtxtError::Missing {
            at: block.at,
            message: path.to_string(),
            field: "default_priority_level".to_string(),
        });
    }
    Ok(batching)
}

fn queue_policy(fields: &[Field], path: &str, ignored: &mut Ignored) -> Result<QueuePolicy> {
    let mut policy = QueuePolicy::default();
    let mut seen = Seen::default();
    for field in fields {
        let inner_path = join(path, &field.name);
        match field.name.as_str() {
            "timeout_action" => {
                seen.once(field, &inner_path)?;
                policy.timeout_action = enumeration(field, &inner_path, TIMEOUT_ACTIONS)?;
            }
            "default_timeout_microseconds" => {
                seen.once(field, &inner_path)?;
                policy.default_timeout_microseconds = unsigned(field, &inner_path)?;
            }
            "allow_timeout_override" => {
                seen.once(field, &inner_path)?;
                policy.allow_timeout_override = boolean(field, &inner_path)?;
            }
            "max_queue_size" => {
                seen.once(field, &inner_path)?;
                policy.max_queue_size = unsigned(field, &inner_path)?;
            }
            _ => ignored.add(inner_path),
        }
    }
    Ok(policy)
}

/// The `count` of one instance group (1 when absent, as Triton).
fn instance_group(fields: &[Field], path: &str, ignored: &mut Ignored) -> Result<usize> {
    let mut count = 1;
    let mut seen = Seen::default();
    for field in fields {
        let inner_path = join(path, &field.name);
        if field.name == "count" {
            seen.once(field, &inner_path)?;
            count = unsigned(field, &inner_path)?;
        } else {
            ignored.add(inner_path);
        }
    }
    Ok(count)
}

/// `version_policy`: one of `latest { num_versions }`, `all { }`, `specific { versions }`.
fn version_policy(fields: &[Field], path: &str, ignored: &mut Ignored) -> Result<VersionPolicy> {
    let mut chosen = None;
    for field in fields {
        let inner_path = join(path, &field.name);
        let policy = match field.name.as_str() {
            "latest" => latest(message(field, &inner_path)?, &inner_path, ignored)?,
            "all" => {
                for inner in message(field, &inner_path)? {
                    ignored.add(join(&inner_path, &inner.name));
                }
                VersionPolicy::All
            }
            "specific" => specific(field, &inner_path, ignored)?,
            _ => {
                ignored.add(inner_path);
                continue;
            }
        };
        if chosen.is_some() {
            return Err(invalid(field, path, "holds more than one of latest, all, specific"));
        }
        chosen = Some(policy);
    }
    Ok(chosen.unwrap_or_default())
}

fn latest(fields: &[Field], path: &str, ignored: &mut Ignored) -> Result<VersionPolicy> {
    let mut num_versions = 1;
    let mut seen = Seen::default();
    for field in fields {
        let inner_path = join(path, &field.name);
        if field.name == "num_versions" {
            seen.once(field, &inner_path)?;
            num_versions = unsigned(field, &inner_path)?;
            if num_versions == 0 {
                return Err(invalid(field, &inner_path, "serving 0 versions serves nothing"));
            }
        } else {
            ignored.add(inner_path);
        }
    }
    Ok(VersionPolicy::Latest { num_versions })
}

fn specific(field: &Field, path: &str, ignored: &mut Ignored) -> Result<VersionPolicy> {
    let mut versions = Vec::new();
    for inner in message(field, path)? {
        let inner_path = join(path, &inner.name);
        if inner.name == "versions" {
            let version: u64 = unsigned(inner, &inner_path)?;
            if version == 0 {
                return Err(invalid(inner, &inner_path, "versions start at 1"));
            }
            versions.push(version);
        } else {
            ignored.add(inner_path);
        }
    }
    if versions.is_empty() {
        return Err(invalid(field, path, "lists no versions"));
    }
    versions.sort_unstable();
    versions.dedup();
    Ok(VersionPolicy::Specific(versions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    fn error(text: &str) -> PbtxtError {
        match parse_model_config(text) {
            Ok(config) => panic!("expected an error, parsed {config:?}"),
            Err(e) => e,
        }
    }

    const RESNET: &str = r#"
# A realistic Triton configuration.
name: "resnet50"
platform: "onnxruntime_onnx"
max_batch_size: 32
version_policy: { specific: { versions: [3, 1] } }
input [
  {
    name: "input"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
  }
]
output [
  {
    name: 'probs',  # single quotes are fine
    data_type: TYPE_FP32,
    dims: [ 1000 ]
    label_filename: "labels.txt"
  },
  { name: "embedding" data_type: TYPE_FP16 dims: [ -1 ] }
]
dynamic_batching {
  preferred_batch_size: [ 8, 16 ]
  max_queue_delay_microseconds: 100
  preserve_ordering: true
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy {
    timeout_action: DELAY
    default_timeout_microseconds: 5000
    allow_timeout_override: true
    max_queue_size: 64
  }
}
instance_group [
  { count: 2, kind: KIND_CPU },
  { kind: KIND_GPU gpus: [ 0 ] }
]
optimization { execution_accelerators { gpu_execution_accelerator: [ { name: "tensorrt" } ] } }
parameters { key: "intra_op_thread_count" value: { string_value: "4" } }
"#;

    #[test]
    fn parses_a_realistic_triton_config() {
        let config = parse_model_config(RESNET).unwrap();
        assert_eq!(config.name.as_deref(), Some("resnet50"));
        assert_eq!(config.platform.as_deref(), Some("onnxruntime_onnx"));
        assert_eq!(config.backend, None);
        assert_eq!(config.max_batch_size, Some(32));
        assert_eq!(config.version_policy, VersionPolicy::Specific(vec![1, 3]));
        assert_eq!(
            config.inputs,
            vec![IoConfig {
                name: "input".into(),
                data_type: "TYPE_FP32".into(),
                dims: vec![3, 224, 224],
            }]
        );
        assert_eq!(config.outputs.len(), 2);
        assert_eq!(config.outputs[0].name, "probs");
        assert_eq!(config.outputs[0].dims, vec![1000]);
        assert_eq!(config.outputs[1].data_type, "TYPE_FP16");
        assert_eq!(config.outputs[1].dims, vec![-1]);
        assert_eq!(
            config.dynamic_batching,
            Some(DynamicBatching {
                preferred_batch_size: vec![8, 16],
                max_queue_delay_microseconds: 100,
                priority_levels: 2,
                default_priority_level: 2,
                default_queue_policy: Some(QueuePolicy {
                    max_queue_size: 64,
                    default_timeout_microseconds: 5000,
                    allow_timeout_override: true,
                    timeout_action: "DELAY".into(),
                }),
            })
        );
        // 2 + the default 1 of a group without `count`.
        assert_eq!(config.instance_count, Some(3));
        assert_eq!(
            config.ignored,
            vec![
                "input.format",
                "output.label_filename",
                "dynamic_batching.preserve_ordering",
                "instance_group.kind",
                "instance_group.gpus",
                "optimization",
                "parameters",
            ]
        );
    }

    #[test]
    fn defaults_when_fields_are_absent() {
        let config = parse_model_config("").unwrap();
        assert_eq!(config, ModelConfigFile::default());
        assert_eq!(config.version_policy, VersionPolicy::Latest { num_versions: 1 });
        assert_eq!(config.instance_count, None);

        let config = parse_model_config("dynamic_batching { }").unwrap();
        assert_eq!(config.dynamic_batching, Some(DynamicBatching::default()));

        let config = parse_model_config("dynamic_batching { default_queue_policy { } }").unwrap();
        let policy = config.dynamic_batching.unwrap().default_queue_policy.unwrap();
        assert_eq!(policy.timeout_action, "REJECT");
        assert_eq!(policy.max_queue_size, 0);
    }

    #[test]
    fn both_list_syntaxes_and_both_message_syntaxes_agree() {
        let listed = r#"input [ { name: "a" data_type: TYPE_INT64 dims: [1] }, { name: "b", data_type: TYPE_BOOL } ]"#;
        let repeated = r#"
            input { name: "a" data_type: TYPE_INT64 dims: 1 }
            input: < name: "b"; data_type: TYPE_BOOL >
        "#;
        let a = parse_model_config(listed).unwrap();
        let b = parse_model_config(repeated).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.inputs[1].name, "b");
        assert!(a.inputs[1].dims.is_empty());

        let config =
            parse_model_config("dynamic_batching { preferred_batch_size: 2 preferred_batch_size: 4 }").unwrap();
        assert_eq!(config.dynamic_batching.unwrap().preferred_batch_size, vec![2, 4]);
    }

    #[test]
    fn version_policy_variants() {
        let policy = |text: &str| parse_model_config(text).map(|c| c.version_policy);
        assert_eq!(
            policy("version_policy: { latest: { num_versions: 2 } }"),
            Ok(VersionPolicy::Latest { num_versions: 2 })
        );
        assert_eq!(
            policy("version_policy { latest { } }"),
            Ok(VersionPolicy::Latest { num_versions: 1 })
        );
        assert_eq!(policy("version_policy: { all: {} }"), Ok(VersionPolicy::All));
        assert_eq!(
            policy("version_policy { specific { versions: 4 versions: 2 } }"),
            Ok(VersionPolicy::Specific(vec![2, 4]))
        );
        assert_eq!(policy("version_policy { }"), Ok(VersionPolicy::default()));

        let e = error("version_policy { latest { num_versions: 0 } }");
        assert_eq!(
            e.to_string(),
            "line 1, column 27: field `version_policy.latest.num_versions`: serving 0 versions serves nothing"
        );
        let e = error("version_policy { all { } latest { } }");
        assert!(e.to_string().contains("more than one of latest, all, specific"), "{e}");
        let e = error("version_policy { specific { } }");
        assert!(
            e.to_string().ends_with("`version_policy.specific`: lists no versions"),
            "{e}"
        );
    }

    #[test]
    fn selects_versions_by_policy() {
        let available = [3, 1, 10, 2];
        assert_eq!(VersionPolicy::default().select(&available), vec![10]);
        assert_eq!(
            VersionPolicy::Latest { num_versions: 2 }.select(&available),
            vec![3, 10]
        );
        assert_eq!(
            VersionPolicy::Latest { num_versions: 9 }.select(&available),
            vec![1, 2, 3, 10]
        );
        assert_eq!(VersionPolicy::All.select(&available), vec![1, 2, 3, 10]);
        assert_eq!(VersionPolicy::Specific(vec![2, 7]).select(&available), vec![2]);
        assert_eq!(VersionPolicy::All.select(&[]), Vec::<u64>::new());
        assert_eq!(VersionPolicy::Specific(vec![1, 3]).to_string(), "specific [1, 3]");
    }

    #[test]
    fn comments_strings_and_numbers() {
        let text =
            "name: \"a\" 'b' # joined\n# whole line\nmax_batch_size: 0x10 # hex\nbackend: \"on\\x6exruntime\\n\"";
        let config = parse_model_config(text).unwrap();
        assert_eq!(config.name.as_deref(), Some("ab"));
        assert_eq!(config.max_batch_size, Some(16));
        assert_eq!(config.backend.as_deref(), Some("onnxruntime\n"));
        let config = parse_model_config("input { name: \"q\\\"\\101\" data_type: TYPE_FP32 dims: [-1, 0x2] }").unwrap();
        assert_eq!(config.inputs[0].name, "q\"A");
        assert_eq!(config.inputs[0].dims, vec![-1, 2]);
        // Unknown fields may hold any value, floats included.
        let config = parse_model_config("model_warmup [ { batch_size: 1, score: -1.5e-3, x: -inf } ]").unwrap();
        assert_eq!(config.ignored, vec!["model_warmup"]);
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        assert_eq!(
            error("name: \"m\"\nmax_batch_size: 8\nplatform:       }").to_string(),
            "line 3, column 17: expected a value after ':', found '}'"
        );
        assert_eq!(
            error("name \"m\"").to_string(),
            "line 1, column 6: expected ':' or '{' after the field name `name`, found \"m\""
        );
        assert_eq!(
            error("input {\n  name: \"x\"\n").to_string(),
            "line 3, column 1: expected a field name or '}' to close `input` opened at line 1, column 7, \
             found the end of the file"
        );
        assert_eq!(
            error("dims: [1 2]").to_string(),
            "line 1, column 10: expected ',' or ']' in the list `dims` opened at line 1, column 7, found `2`"
        );
        assert_eq!(
            error("dims: [1, ]").to_string(),
            "line 1, column 11: expected a value in the list `dims`, found ']'"
        );
        assert_eq!(
            error("name: \"abc\nplatform: \"x\"").to_string(),
            "line 1, column 7: expected a closing \" for the string opened here, found the end of the line"
        );
        assert_eq!(
            error("}").to_string(),
            "line 1, column 1: expected a field name, found '}'"
        );
        assert_eq!(error("name: @").position(), at(1, 7));
        assert!(error("name: \"\\q\"").to_string().contains("escape"));
        let deep = "a { ".repeat(MAX_DEPTH + 1) + &"} ".repeat(MAX_DEPTH + 1);
        assert!(error(&deep).to_string().contains("nested messages"));
    }

    #[test]
    fn wrong_types_name_the_field() {
        assert_eq!(
            error("max_batch_size: \"eight\"").to_string(),
            "line 1, column 1: field `max_batch_size` expects a non-negative integer, found \"eight\""
        );
        assert_eq!(
            error("max_batch_size: -1").to_string(),
            "line 1, column 1: field `max_batch_size` expects a non-negative integer, found `-1`"
        );
        assert_eq!(
            error("name: resnet").to_string(),
            "line 1, column 1: field `name` expects a quoted string, found `resnet`"
        );
        assert_eq!(
            error("input { name: \"x\" data_type: TYPE_FP23 }").to_string(),
            format!(
                "line 1, column 19: field `input.data_type` expects one of {}, found `TYPE_FP23`",
                DATA_TYPES.join(", ")
            )
        );
        assert_eq!(
            error("input { name: \"x\" data_type: TYPE_FP32 dims: [3, x] }").to_string(),
            "line 1, column 50: field `input.dims` expects an integer, found `x`"
        );
        assert_eq!(
            error("dynamic_batching: 5").to_string(),
            "line 1, column 1: field `dynamic_batching` expects a message { ... }, found `5`"
        );
        assert_eq!(
            error("dynamic_batching { default_queue_policy { allow_timeout_override: yes } }").to_string(),
            "line 1, column 43: field `dynamic_batching.default_queue_policy.allow_timeout_override` \
             expects true or false, found `yes`"
        );
        assert!(
            error("dynamic_batching { default_queue_policy { timeout_action: \"DELAY\" } }")
                .to_string()
                .contains("expects one of REJECT, DELAY")
        );
    }

    #[test]
    fn invalid_configurations_are_errors() {
        assert_eq!(
            error("max_batch_size: 1\nmax_batch_size: 2").to_string(),
            "line 2, column 1: field `max_batch_size` is given more than once"
        );
        assert_eq!(
            error("input { data_type: TYPE_FP32 }").to_string(),
            "line 1, column 1: `input` has no `name`"
        );
        assert_eq!(
            error("output [ { name: \"y\" } ]").to_string(),
            "line 1, column 10: `output` has no `data_type`"
        );
        assert_eq!(
            error("max_batch_size: 8\ndynamic_batching { preferred_batch_size: [4, 16] }").to_string(),
            "line 2, column 1: field `dynamic_batching.preferred_batch_size`: 16 exceeds max_batch_size 8 \
             (set at line 1, column 1)"
        );
        assert!(
            error("dynamic_batching { priority_levels: 2 default_priority_level: 3 }")
                .to_string()
                .contains("3 is outside 1..=2")
        );
        assert!(error("dynamic_batching { priority_levels: 2 }")
            .to_string()
            .contains("has no `default_priority_level`"));
        assert!(error("input { name: \"x\" data_type: TYPE_FP32 dims: [-2] }")
            .to_string()
            .contains("-2 is not a dimension"));
    }
}
