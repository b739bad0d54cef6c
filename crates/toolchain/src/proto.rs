//! Hand-written [`prost`] messages mirroring `onnx.proto` of onnx 1.23 (proto2 wire format).
//!
//! Every message, field, tag number and enum of the upstream schema is present, so a model
//! decoded here and encoded again loses nothing the schema describes. The proto2 rules are
//! followed the way `prost-build` follows them:
//!
//! * `optional` scalar and string fields are `Option<T>` (presence is kept, so a field that
//!   was explicitly set to its default value is written back);
//! * repeated numeric fields are unpacked unless the schema says `[packed = true]` (only
//!   `TensorProto`'s `*_data` fields do);
//! * enum-typed fields are stored as `i32` (`Option<i32>` when optional), with the generated
//!   accessors (for example `AttributeProto::r#type()`) converting to the enum;
//! * the recursive `TypeProto` references are boxed.
//!
//! Fields are encoded in tag order, as the C++ protobuf runtime does, so re-encoding a
//! well-formed file reproduces its bytes. The one exception is a `oneof` whose lowest tag is
//! larger than a plain field's tag in the same message (`TypeProto`'s `optional_type` = 9 or
//! `sparse_tensor_type` = 8 next to `denotation` = 6): prost writes the whole oneof at its
//! lowest tag, so the order of those two fields can differ; the decoded value is the same.
//!
//! Unknown fields (not in the schema) are dropped on decode, and `string` fields must be
//! valid UTF-8.

#![allow(clippy::derive_partial_eq_without_eq)]

/// Versioning of the ONNX IR (`ModelProto.ir_version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Version {
    /// `_START_VERSION`: placeholder so the first real version is 1.
    StartVersion = 0,
    /// `IR_VERSION_2017_10_10`.
    IrVersion20171010 = 1,
    /// `IR_VERSION_2017_10_30`.
    IrVersion20171030 = 2,
    /// `IR_VERSION_2017_11_3`.
    IrVersion2017113 = 3,
    /// `IR_VERSION_2019_1_22`.
    IrVersion2019122 = 4,
    /// `IR_VERSION_2019_3_18`.
    IrVersion2019318 = 5,
    /// `IR_VERSION_2019_9_19`.
    IrVersion2019919 = 6,
    /// `IR_VERSION_2020_5_8`.
    IrVersion202058 = 7,
    /// `IR_VERSION_2021_7_30`.
    IrVersion2021730 = 8,
    /// `IR_VERSION_2023_5_5`.
    IrVersion202355 = 9,
    /// `IR_VERSION_2024_3_25`.
    IrVersion2024325 = 10,
    /// `IR_VERSION_2025_05_12`.
    IrVersion20250512 = 11,
    /// `IR_VERSION_2025_08_26`.
    IrVersion20250826 = 12,
    /// `IR_VERSION_2025_11_06`.
    IrVersion20251106 = 13,
    /// `IR_VERSION`: the current IR version of onnx 1.23.
    IrVersion = 14,
}

/// Status of an operator set or function (`OperatorStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum OperatorStatus {
    /// `EXPERIMENTAL`.
    Experimental = 0,
    /// `STABLE`.
    Stable = 1,
}

/// A named attribute of a node or function, holding one value of the kind given by `type`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// Attribute name (namespace Attribute).
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// In a function body: the name of the caller's attribute this one refers to.
    #[prost(string, optional, tag = "21")]
    pub ref_attr_name: Option<String>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "13")]
    pub doc_string: Option<String>,
    /// Which of the value fields below is in use.
    #[prost(enumeration = "attribute_proto::AttributeType", optional, tag = "20")]
    pub r#type: Option<i32>,
    /// `FLOAT` value.
    #[prost(float, optional, tag = "2")]
    pub f: Option<f32>,
    /// `INT` value.
    #[prost(int64, optional, tag = "3")]
    pub i: Option<i64>,
    /// `STRING` value (UTF-8 bytes).
    #[prost(bytes = "vec", optional, tag = "4")]
    pub s: Option<Vec<u8>>,
    /// `TENSOR` value.
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// `GRAPH` value.
    #[prost(message, optional, tag = "6")]
    pub g: Option<GraphProto>,
    /// `SPARSE_TENSOR` value.
    #[prost(message, optional, tag = "22")]
    pub sparse_tensor: Option<SparseTensorProto>,
    /// `TYPE_PROTO` value.
    #[prost(message, optional, tag = "14")]
    pub tp: Option<TypeProto>,
    /// `FLOATS` value.
    #[prost(float, repeated, packed = "false", tag = "7")]
    pub floats: Vec<f32>,
    /// `INTS` value.
    #[prost(int64, repeated, packed = "false", tag = "8")]
    pub ints: Vec<i64>,
    /// `STRINGS` value (UTF-8 bytes each).
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// `TENSORS` value.
    #[prost(message, repeated, tag = "10")]
    pub tensors: Vec<TensorProto>,
    /// `GRAPHS` value.
    #[prost(message, repeated, tag = "11")]
    pub graphs: Vec<GraphProto>,
    /// `SPARSE_TENSORS` value.
    #[prost(message, repeated, tag = "23")]
    pub sparse_tensors: Vec<SparseTensorProto>,
    /// `TYPE_PROTOS` value.
    #[prost(message, repeated, tag = "15")]
    pub type_protos: Vec<TypeProto>,
}

/// Nested types of [`AttributeProto`].
pub mod attribute_proto {
    /// The kind of value an attribute holds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum AttributeType {
        /// `UNDEFINED`.
        Undefined = 0,
        /// `FLOAT`.
        Float = 1,
        /// `INT`.
        Int = 2,
        /// `STRING`.
        String = 3,
        /// `TENSOR`.
        Tensor = 4,
        /// `GRAPH`.
        Graph = 5,
        /// `SPARSE_TENSOR`.
        SparseTensor = 11,
        /// `TYPE_PROTO`.
        TypeProto = 13,
        /// `FLOATS`.
        Floats = 6,
        /// `INTS`.
        Ints = 7,
        /// `STRINGS`.
        Strings = 8,
        /// `TENSORS`.
        Tensors = 9,
        /// `GRAPHS`.
        Graphs = 10,
        /// `SPARSE_TENSORS`.
        SparseTensors = 12,
        /// `TYPE_PROTOS`.
        TypeProtos = 14,
    }
}

/// Name, type and metadata of a graph input, output or intermediate value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// Value name (namespace Value).
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Type of the value.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "3")]
    pub doc_string: Option<String>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "4")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A computation node: one call of an operator or function.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// Input value names (namespace Value); empty strings mark omitted optional inputs.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output value names (namespace Value).
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Node name (namespace Node).
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    /// Operator or function name (namespace Operator).
    #[prost(string, optional, tag = "4")]
    pub op_type: Option<String>,
    /// Domain of the operator set (namespace Domain); unset or empty means `ai.onnx`.
    #[prost(string, optional, tag = "7")]
    pub domain: Option<String>,
    /// Overload identifier of a called function.
    #[prost(string, optional, tag = "8")]
    pub overload: Option<String>,
    /// Attributes of the node.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "6")]
    pub doc_string: Option<String>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "9")]
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Multi-device configurations of this node.
    #[prost(message, repeated, tag = "10")]
    pub device_configurations: Vec<NodeDeviceConfigurationProto>,
}

/// One entry of a map from an integer to a list of integers.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IntIntListEntryProto {
    /// Key.
    #[prost(int64, optional, tag = "1")]
    pub key: Option<i64>,
    /// Values.
    #[prost(int64, repeated, packed = "false", tag = "2")]
    pub value: Vec<i64>,
}

/// How one node is spread over the devices of a [`DeviceConfigurationProto`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeDeviceConfigurationProto {
    /// Name of the [`DeviceConfigurationProto`] this refers to.
    #[prost(string, optional, tag = "1")]
    pub configuration_id: Option<String>,
    /// Sharding of the node's inputs and outputs.
    #[prost(message, repeated, tag = "2")]
    pub sharding_spec: Vec<ShardingSpecProto>,
    /// Pipeline stage of the node.
    #[prost(int32, optional, tag = "3")]
    pub pipeline_stage: Option<i32>,
}

/// Sharding of one tensor over devices.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShardingSpecProto {
    /// Name of the sharded tensor.
    #[prost(string, optional, tag = "1")]
    pub tensor_name: Option<String>,
    /// Devices (or device-group ids) the tensor is spread over.
    #[prost(int64, repeated, packed = "false", tag = "2")]
    pub device: Vec<i64>,
    /// Map from device-group id to the devices of that group.
    #[prost(message, repeated, tag = "3")]
    pub index_to_device_group_map: Vec<IntIntListEntryProto>,
    /// Sharding of each sharded axis.
    #[prost(message, repeated, tag = "4")]
    pub sharded_dim: Vec<ShardedDimProto>,
}

/// Sharding of one axis of a tensor.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShardedDimProto {
    /// The sharded axis.
    #[prost(int64, optional, tag = "1")]
    pub axis: Option<i64>,
    /// Nested shardings of the axis, outermost first.
    #[prost(message, repeated, tag = "2")]
    pub simple_sharding: Vec<SimpleShardedDimProto>,
}

/// A single level of sharding of one axis.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SimpleShardedDimProto {
    /// Size of the axis being sharded.
    #[prost(oneof = "simple_sharded_dim_proto::Dim", tags = "1, 2")]
    pub dim: Option<simple_sharded_dim_proto::Dim>,
    /// Number of shards.
    #[prost(int64, optional, tag = "3")]
    pub num_shards: Option<i64>,
}

/// Nested types of [`SimpleShardedDimProto`].
pub mod simple_sharded_dim_proto {
    /// Size of the sharded axis: a number or a symbolic name.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Dim {
        /// `dim_value`.
        #[prost(int64, tag = "1")]
        DimValue(i64),
        /// `dim_param`.
        #[prost(string, tag = "2")]
        DimParam(String),
    }
}

/// Training information: an initialisation step and an algorithm (training) step.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrainingInfoProto {
    /// Graph that initialises the state.
    #[prost(message, optional, tag = "1")]
    pub initialization: Option<GraphProto>,
    /// Graph of one training iteration.
    #[prost(message, optional, tag = "2")]
    pub algorithm: Option<GraphProto>,
    /// State updated by `initialization`: initializer name to output name.
    #[prost(message, repeated, tag = "3")]
    pub initialization_binding: Vec<StringStringEntryProto>,
    /// State updated by `algorithm`: initializer name to output name.
    #[prost(message, repeated, tag = "4")]
    pub update_binding: Vec<StringStringEntryProto>,
}

/// The top-level ONNX model: a graph plus its metadata and imported operator sets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// IR version of the model (see [`Version`]).
    #[prost(int64, optional, tag = "1")]
    pub ir_version: Option<i64>,
    /// Operator sets the model uses.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Name of the tool that produced the model.
    #[prost(string, optional, tag = "2")]
    pub producer_name: Option<String>,
    /// Version of the tool that produced the model.
    #[prost(string, optional, tag = "3")]
    pub producer_version: Option<String>,
    /// Reverse-DNS namespace of the model.
    #[prost(string, optional, tag = "4")]
    pub domain: Option<String>,
    /// Version of the model itself.
    #[prost(int64, optional, tag = "5")]
    pub model_version: Option<i64>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "6")]
    pub doc_string: Option<String>,
    /// The main graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Training information.
    #[prost(message, repeated, tag = "20")]
    pub training_info: Vec<TrainingInfoProto>,
    /// Model-local functions.
    #[prost(message, repeated, tag = "25")]
    pub functions: Vec<FunctionProto>,
    /// Multi-device configurations.
    #[prost(message, repeated, tag = "26")]
    pub configuration: Vec<DeviceConfigurationProto>,
}

/// A named set of devices the model may be spread over.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeviceConfigurationProto {
    /// Configuration name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Number of devices.
    #[prost(int32, optional, tag = "2")]
    pub num_devices: Option<i32>,
    /// Device names.
    #[prost(string, repeated, tag = "3")]
    pub device: Vec<String>,
}

/// A string-to-string key/value pair.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringStringEntryProto {
    /// Key.
    #[prost(string, optional, tag = "1")]
    pub key: Option<String>,
    /// Value.
    #[prost(string, optional, tag = "2")]
    pub value: Option<String>,
}

/// Quantisation parameters attached to one tensor of a graph.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorAnnotation {
    /// Name of the annotated tensor.
    #[prost(string, optional, tag = "1")]
    pub tensor_name: Option<String>,
    /// Parameter kind (e.g. `SCALE`, `ZERO_POINT`) to the tensor holding it.
    #[prost(message, repeated, tag = "2")]
    pub quant_parameter_tensor_names: Vec<StringStringEntryProto>,
}

/// A graph: nodes in topological order, initializers, inputs, outputs and value infos.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// Nodes, in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Graph name (namespace Graph).
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Constant tensors (weights) of the graph.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Constant sparse tensors of the graph.
    #[prost(message, repeated, tag = "15")]
    pub sparse_initializer: Vec<SparseTensorProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "10")]
    pub doc_string: Option<String>,
    /// Graph inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Graph outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Types and shapes of intermediate values.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
    /// Quantisation annotations of tensors.
    #[prost(message, repeated, tag = "14")]
    pub quantization_annotation: Vec<TensorAnnotation>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A dense tensor: shape, element type and data (inline, raw bytes or external).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Shape; empty for a scalar.
    #[prost(int64, repeated, packed = "false", tag = "1")]
    pub dims: Vec<i64>,
    /// Element type, a [`tensor_proto::DataType`] value.
    #[prost(int32, optional, tag = "2")]
    pub data_type: Option<i32>,
    /// The chunk of a larger tensor this one holds.
    #[prost(message, optional, tag = "3")]
    pub segment: Option<tensor_proto::Segment>,
    /// Data of `FLOAT` and `COMPLEX64` tensors.
    #[prost(float, repeated, packed = "true", tag = "4")]
    pub float_data: Vec<f32>,
    /// Data of `INT32`, `INT16`, `INT8`, `INT4`, `INT2`, `UINT16`, `UINT8`, `UINT4`, `UINT2`,
    /// `BOOL`, `FLOAT16`, `BFLOAT16` and the 8/6/4-bit float tensors.
    #[prost(int32, repeated, packed = "true", tag = "5")]
    pub int32_data: Vec<i32>,
    /// Data of `STRING` tensors (UTF-8 bytes each).
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    /// Data of `INT64` tensors.
    #[prost(int64, repeated, packed = "true", tag = "7")]
    pub int64_data: Vec<i64>,
    /// Tensor name (namespace Value).
    #[prost(string, optional, tag = "8")]
    pub name: Option<String>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "12")]
    pub doc_string: Option<String>,
    /// Data as little-endian fixed-width bytes (any type but `STRING`).
    #[prost(bytes = "vec", optional, tag = "9")]
    pub raw_data: Option<Vec<u8>>,
    /// Location of externally stored data (`location`, `offset`, `length`, `checksum`).
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// Where the data is stored.
    #[prost(enumeration = "tensor_proto::DataLocation", optional, tag = "14")]
    pub data_location: Option<i32>,
    /// Data of `DOUBLE` and `COMPLEX128` tensors.
    #[prost(double, repeated, packed = "true", tag = "10")]
    pub double_data: Vec<f64>,
    /// Data of `UINT32` and `UINT64` tensors.
    #[prost(uint64, repeated, packed = "true", tag = "11")]
    pub uint64_data: Vec<u64>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// Nested types of [`TensorProto`].
pub mod tensor_proto {
    /// Element type of a tensor.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataType {
        /// `UNDEFINED`.
        Undefined = 0,
        /// `FLOAT`: IEEE 754 binary32.
        Float = 1,
        /// `UINT8`.
        Uint8 = 2,
        /// `INT8`.
        Int8 = 3,
        /// `UINT16`.
        Uint16 = 4,
        /// `INT16`.
        Int16 = 5,
        /// `INT32`.
        Int32 = 6,
        /// `INT64`.
        Int64 = 7,
        /// `STRING`.
        String = 8,
        /// `BOOL`.
        Bool = 9,
        /// `FLOAT16`: IEEE 754 binary16.
        Float16 = 10,
        /// `DOUBLE`: IEEE 754 binary64.
        Double = 11,
        /// `UINT32`.
        Uint32 = 12,
        /// `UINT64`.
        Uint64 = 13,
        /// `COMPLEX64`: two binary32 (real, imaginary).
        Complex64 = 14,
        /// `COMPLEX128`: two binary64 (real, imaginary).
        Complex128 = 15,
        /// `BFLOAT16`.
        Bfloat16 = 16,
        /// `FLOAT8E4M3FN`.
        Float8e4m3fn = 17,
        /// `FLOAT8E4M3FNUZ`.
        Float8e4m3fnuz = 18,
        /// `FLOAT8E5M2`.
        Float8e5m2 = 19,
        /// `FLOAT8E5M2FNUZ`.
        Float8e5m2fnuz = 20,
        /// `UINT4`.
        Uint4 = 21,
        /// `INT4`.
        Int4 = 22,
        /// `FLOAT4E2M1`.
        Float4e2m1 = 23,
        /// `FLOAT8E8M0`.
        Float8e8m0 = 24,
        /// `UINT2`.
        Uint2 = 25,
        /// `INT2`.
        Int2 = 26,
        /// `FLOAT6E2M3`.
        Float6e2m3 = 27,
        /// `FLOAT6E3M2`.
        Float6e3m2 = 28,
    }

    /// A chunk `[begin, end)` of a tensor split over several `TensorProto`s.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Segment {
        /// First index of the chunk.
        #[prost(int64, optional, tag = "1")]
        pub begin: Option<i64>,
        /// One past the last index of the chunk.
        #[prost(int64, optional, tag = "2")]
        pub end: Option<i64>,
    }

    /// Where a tensor's data is stored.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DataLocation {
        /// `DEFAULT`: in the proto itself.
        Default = 0,
        /// `EXTERNAL`: in a separate file, described by `external_data`.
        External = 1,
    }
}

/// A sparse tensor in coordinate (COO) format.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseTensorProto {
    /// The non-default values, a 1-D tensor of NNZ elements.
    #[prost(message, optional, tag = "1")]
    pub values: Option<TensorProto>,
    /// Their indices: `[NNZ, rank]` coordinates or `[NNZ]` linearised indices.
    #[prost(message, optional, tag = "2")]
    pub indices: Option<TensorProto>,
    /// Shape of the dense tensor.
    #[prost(int64, repeated, packed = "false", tag = "3")]
    pub dims: Vec<i64>,
}

/// The shape of a tensor: one entry per axis.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// Axes, outermost first.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<tensor_shape_proto::Dimension>,
}

/// Nested types of [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// One axis of a shape: a known size, a symbolic name, or unknown.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dimension {
        /// Size of the axis; `None` if unknown.
        #[prost(oneof = "dimension::Value", tags = "1, 2")]
        pub value: Option<dimension::Value>,
        /// Standard denotation of the axis (e.g. `DATA_BATCH`).
        #[prost(string, optional, tag = "3")]
        pub denotation: Option<String>,
    }

    /// Nested types of [`Dimension`].
    pub mod dimension {
        /// Size of an axis: a number or a symbolic name.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// `dim_value`.
            #[prost(int64, tag = "1")]
            DimValue(i64),
            /// `dim_param` (namespace Shape).
            #[prost(string, tag = "2")]
            DimParam(String),
        }
    }
}

/// The type of a value: tensor, sequence, map, optional, sparse tensor or opaque.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// The kind of type and its parameters.
    #[prost(oneof = "type_proto::Value", tags = "1, 4, 5, 9, 8, 7")]
    pub value: Option<type_proto::Value>,
    /// Standard denotation of the type (e.g. `IMAGE`).
    #[prost(string, optional, tag = "6")]
    pub denotation: Option<String>,
}

/// Nested types of [`TypeProto`].
pub mod type_proto {
    /// A dense tensor type: element type and (possibly partial) shape.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Tensor {
        /// Element type, a [`super::tensor_proto::DataType`] value.
        #[prost(int32, optional, tag = "1")]
        pub elem_type: Option<i32>,
        /// Shape; `None` means unknown rank.
        #[prost(message, optional, tag = "2")]
        pub shape: Option<super::TensorShapeProto>,
    }

    /// A sequence type.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sequence {
        /// Type of the elements.
        #[prost(message, optional, boxed, tag = "1")]
        pub elem_type: Option<Box<super::TypeProto>>,
    }

    /// A map type.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Map {
        /// Key type, a [`super::tensor_proto::DataType`] value (integral or `STRING`).
        #[prost(int32, optional, tag = "1")]
        pub key_type: Option<i32>,
        /// Value type.
        #[prost(message, optional, boxed, tag = "2")]
        pub value_type: Option<Box<super::TypeProto>>,
    }

    /// An optional type: a value of `elem_type` or nothing.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Optional {
        /// Type of the value when present.
        #[prost(message, optional, boxed, tag = "1")]
        pub elem_type: Option<Box<super::TypeProto>>,
    }

    /// A sparse tensor type: element type and (possibly partial) shape.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SparseTensor {
        /// Element type, a [`super::tensor_proto::DataType`] value.
        #[prost(int32, optional, tag = "1")]
        pub elem_type: Option<i32>,
        /// Shape; `None` means unknown rank.
        #[prost(message, optional, tag = "2")]
        pub shape: Option<super::TensorShapeProto>,
    }

    /// An opaque type, identified by domain and name.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Opaque {
        /// Domain of the type.
        #[prost(string, optional, tag = "1")]
        pub domain: Option<String>,
        /// Name of the type.
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
    }

    /// The kind of a [`super::TypeProto`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// `tensor_type`.
        #[prost(message, tag = "1")]
        TensorType(Tensor),
        /// `sequence_type`.
        #[prost(message, tag = "4")]
        SequenceType(Sequence),
        /// `map_type`.
        #[prost(message, tag = "5")]
        MapType(Map),
        /// `optional_type`.
        #[prost(message, tag = "9")]
        OptionalType(Optional),
        /// `sparse_tensor_type`.
        #[prost(message, tag = "8")]
        SparseTensorType(SparseTensor),
        /// `opaque_type`.
        #[prost(message, tag = "7")]
        OpaqueType(Opaque),
    }
}

/// An imported operator set: a domain and its version.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// Domain; unset or empty means `ai.onnx`.
    #[prost(string, optional, tag = "1")]
    pub domain: Option<String>,
    /// Version of the operator set.
    #[prost(int64, optional, tag = "2")]
    pub version: Option<i64>,
}

/// A model-local function: a named subgraph callable from nodes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionProto {
    /// Function name (the `op_type` that calls it).
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Input names.
    #[prost(string, repeated, tag = "4")]
    pub input: Vec<String>,
    /// Output names.
    #[prost(string, repeated, tag = "5")]
    pub output: Vec<String>,
    /// Names of attributes without default values.
    #[prost(string, repeated, tag = "6")]
    pub attribute: Vec<String>,
    /// Attributes with default values.
    #[prost(message, repeated, tag = "11")]
    pub attribute_proto: Vec<AttributeProto>,
    /// Body nodes, in topological order.
    #[prost(message, repeated, tag = "7")]
    pub node: Vec<NodeProto>,
    /// Human-readable documentation.
    #[prost(string, optional, tag = "8")]
    pub doc_string: Option<String>,
    /// Operator sets the body uses.
    #[prost(message, repeated, tag = "9")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Domain of the function.
    #[prost(string, optional, tag = "10")]
    pub domain: Option<String>,
    /// Overload identifier.
    #[prost(string, optional, tag = "13")]
    pub overload: Option<String>,
    /// Types and shapes of values in the body.
    #[prost(message, repeated, tag = "12")]
    pub value_info: Vec<ValueInfoProto>,
    /// Named metadata values.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

impl tensor_proto::DataType {
    /// The ONNX name of the element type, as spelled in `onnx.proto` (e.g. `"FLOAT16"`).
    pub fn name(&self) -> &'static str {
        use tensor_proto::DataType::*;
        match self {
            Undefined => "UNDEFINED",
            Float => "FLOAT",
            Uint8 => "UINT8",
            Int8 => "INT8",
            Uint16 => "UINT16",
            Int16 => "INT16",
            Int32 => "INT32",
            Int64 => "INT64",
            String => "STRING",
            Bool => "BOOL",
            Float16 => "FLOAT16",
            Double => "DOUBLE",
            Uint32 => "UINT32",
            Uint64 => "UINT64",
            Complex64 => "COMPLEX64",
            Complex128 => "COMPLEX128",
            Bfloat16 => "BFLOAT16",
            Float8e4m3fn => "FLOAT8E4M3FN",
            Float8e4m3fnuz => "FLOAT8E4M3FNUZ",
            Float8e5m2 => "FLOAT8E5M2",
            Float8e5m2fnuz => "FLOAT8E5M2FNUZ",
            Uint4 => "UINT4",
            Int4 => "INT4",
            Float4e2m1 => "FLOAT4E2M1",
            Float8e8m0 => "FLOAT8E8M0",
            Uint2 => "UINT2",
            Int2 => "INT2",
            Float6e2m3 => "FLOAT6E2M3",
            Float6e3m2 => "FLOAT6E3M2",
        }
    }
}

/// Decodes a serialized `ModelProto` (the contents of a `.onnx` file).
pub fn decode_model(bytes: &[u8]) -> Result<ModelProto, prost::DecodeError> {
    <ModelProto as prost::Message>::decode(bytes)
}

/// Encodes a `ModelProto` into the bytes of a `.onnx` file.
pub fn encode_model(model: &ModelProto) -> Vec<u8> {
    prost::Message::encode_to_vec(model)
}
