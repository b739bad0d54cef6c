//! The HTTP routes: KServe v2 REST with Triton's extensions, health, metrics.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hinfer_core::{DType, Dim};
use hinfer_router::InferRequest;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::kserve::{self, InferRequestJson, InferResponseJson, OutputJson, RequestHints};
use crate::metrics;
use crate::state::{AppState, ServedModel};

/// Header carrying the length of the JSON part of a binary-extension body.
pub const HEADER_LENGTH: &str = "inference-header-content-length";

type Shared = State<Arc<AppState>>;
type Params = Path<HashMap<String, String>>;

/// The whole application: every route, the auth layer, the body cap, JSON 404/405.
pub fn app(state: Arc<AppState>) -> Router {
    let protected = Router::new()
        .route("/v2", get(server_metadata))
        .route("/v2/models/stats", get(all_stats))
        .route("/v2/models/{model}", get(model_metadata))
        .route("/v2/models/{model}/ready", get(model_ready))
        .route("/v2/models/{model}/config", get(model_config))
        .route("/v2/models/{model}/stats", get(model_stats))
        .route("/v2/models/{model}/infer", post(infer))
        .route("/v2/models/{model}/versions/{version}", get(model_metadata))
        .route("/v2/models/{model}/versions/{version}/ready", get(model_ready))
        .route("/v2/models/{model}/versions/{version}/config", get(model_config))
        .route("/v2/models/{model}/versions/{version}/stats", get(model_stats))
        .route("/v2/models/{model}/versions/{version}/infer", post(infer))
        .route("/metrics", get(prometheus))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .route("/v2/health/live", get(live))
        .route("/v2/health/ready", get(ready))
        .merge(protected)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.body_limit))
        .with_state(state)
}

/// Only `/metrics`, for a separate metrics port.
pub fn metrics_app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/metrics", get(prometheus))
        .fallback(not_found)
        .with_state(state)
}

async fn require_token(State(state): Shared, request: Request, next: Next) -> Response {
    if let Some(token) = &state.auth_token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let ok = given
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes()));
        if !ok {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(format!("no route for {} {}", request.method(), request.uri().path()))
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!("method {} is not allowed on {}", request.method(), request.uri().path()),
        reason: "invalid_input",
    }
}

async fn live() -> StatusCode {
    StatusCode::OK
}

async fn ready(State(state): Shared) -> StatusCode {
    if state.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

async fn server_metadata() -> Json<Value> {
    Json(json!({
        "name": "hinfer",
        "version": env!("CARGO_PKG_VERSION"),
        "extensions": ["binary_tensor_data", "model_configuration", "statistics", "parameters"],
    }))
}

fn find<'s>(state: &'s AppState, params: &HashMap<String, String>) -> Result<&'s Arc<ServedModel>, ApiError> {
    let model = params.get("model").map(String::as_str).unwrap_or_default();
    state.find(model, params.get("version").map(String::as_str))
}

fn platform(m: &ServedModel) -> (&'static str, &'static str) {
    match m.backend {
        hinfer_core::BackendKind::Ort => ("onnxruntime_onnx", "onnxruntime"),
        hinfer_core::BackendKind::Tract => ("tract_onnx", "tract"),
    }
}

async fn model_metadata(State(state): Shared, Path(params): Params) -> Result<Json<Value>, ApiError> {
    let m = find(&state, &params)?;
    let versions: Vec<String> = state
        .models
        .get(&m.name)
        .map(|v| v.versions.keys().map(|k| k.1.clone()).collect())
        .unwrap_or_default();
    let specs = |list: &[hinfer_core::TensorSpec]| -> Vec<Value> {
        list.iter()
            .map(|s| json!({ "name": s.name, "datatype": s.dtype.name(), "shape": s.shape.to_kserve() }))
            .collect()
    };
    Ok(Json(json!({
        "name": m.name,
        "versions": versions,
        "platform": platform(m).0,
        "inputs": specs(&m.metadata.inputs),
        "outputs": specs(&m.metadata.outputs),
    })))
}

async fn model_ready(State(state): Shared, Path(params): Params) -> Result<StatusCode, ApiError> {
    let m = find(&state, &params)?;
    Ok(if m.ready() && state.accepting.load(Ordering::Relaxed) {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    })
}

/// Triton's `TYPE_*` name of a dtype.
fn triton_type(d: DType) -> &'static str {
    match d {
        DType::Bool => "TYPE_BOOL",
        DType::U8 => "TYPE_UINT8",
        DType::U16 => "TYPE_UINT16",
        DType::U32 => "TYPE_UINT32",
        DType::U64 => "TYPE_UINT64",
        DType::I8 => "TYPE_INT8",
        DType::I16 => "TYPE_INT16",
        DType::I32 => "TYPE_INT32",
        DType::I64 => "TYPE_INT64",
        DType::F16 => "TYPE_FP16",
        DType::BF16 => "TYPE_BF16",
        DType::F32 => "TYPE_FP32",
        DType::F64 => "TYPE_FP64",
        DType::Bytes => "TYPE_STRING",
    }
}

async fn model_config(State(state): Shared, Path(params): Params) -> Result<Json<Value>, ApiError> {
    let m = find(&state, &params)?;
    let batched = m.max_batch_size > 0;
    let io = |list: &[hinfer_core::TensorSpec]| -> Vec<Value> {
        list.iter()
            .map(|s| {
                let dims: Vec<i64> = s
                    .shape
                    .dims()
                    .iter()
                    .skip(usize::from(batched))
                    .map(Dim::to_i64)
                    .collect();
                json!({ "name": s.name, "data_type": triton_type(s.dtype), "dims": dims })
            })
            .collect()
    };
    let (platform, backend) = platform(m);
    let mut config = json!({
        "name": m.name,
        "platform": platform,
        "backend": backend,
        "max_batch_size": m.max_batch_size,
        "input": io(&m.metadata.inputs),
        "output": io(&m.metadata.outputs),
        "instance_group": [{ "name": m.name, "kind": "KIND_CPU", "count": m.instances }],
        "version_policy": { "latest": { "num_versions": 1 } },
    });
    if m.dynamic_batching {
        let c = &m.batch_config;
        config["dynamic_batching"] = json!({
            "preferred_batch_size": c.preferred_batch_sizes,
            "max_queue_delay_microseconds": c.max_queue_delay.as_micros() as u64,
            "priority_levels": c.priority_levels,
            "default_priority_level": c.default_priority_level,
            "default_queue_policy": {
                "max_queue_size": c.max_queue_size.unwrap_or(0),
                "default_timeout_microseconds": c.default_timeout.map_or(0, |t| t.as_micros() as u64),
                "timeout_action": "REJECT",
                "allow_timeout_override": true,
            },
        });
    }
    Ok(Json(config))
}

async fn model_stats(State(state): Shared, Path(params): Params) -> Result<Json<Value>, ApiError> {
    let m = find(&state, &params)?;
    Ok(Json(
        json!({ "model_stats": [m.metrics.triton_stats(m.queue.stats())] }),
    ))
}

async fn all_stats(State(state): Shared) -> Json<Value> {
    let stats: Vec<Value> = state.all().map(|m| m.metrics.triton_stats(m.queue.stats())).collect();
    Json(json!({ "model_stats": stats }))
}

async fn prometheus(State(state): Shared) -> Response {
    let models: Vec<_> = state.all().map(|m| (&m.metrics, m.queue.stats())).collect();
    let text = metrics::render_prometheus(&models);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

async fn infer(
    State(state): Shared,
    Path(params): Params,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let started = Instant::now();
    let model = match find(&state, &params) {
        Ok(m) => m.clone(),
        Err(e) => return e.into_response(),
    };
    match run_infer(&state, &model, &headers, body).await {
        Ok(response) => response,
        Err(e) => {
            model.metrics.failure(e.reason, started.elapsed());
            e.into_response()
        }
    }
}

/// Splits a body into its JSON header and the binary tensor data after it.
fn split_body<'b>(headers: &HeaderMap, body: &'b [u8]) -> Result<(&'b [u8], &'b [u8]), ApiError> {
    let Some(value) = headers.get(HEADER_LENGTH) else {
        return Ok((body, &[]));
    };
    let length: usize = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| ApiError::invalid(format!("header {HEADER_LENGTH} must be a byte count")))?;
    if length > body.len() {
        return Err(ApiError::invalid(format!(
            "header {HEADER_LENGTH} says {length} bytes of JSON but the body has {}",
            body.len()
        )));
    }
    Ok(body.split_at(length))
}

async fn run_infer(
    state: &AppState,
    model: &Arc<ServedModel>,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("request body exceeds the limit of {} bytes", state.body_limit),
            reason: "invalid_input",
        },
        status => ApiError {
            status,
            message: format!("cannot read the request body: {e}"),
            reason: "invalid_input",
        },
    })?;
    if !state.accepting.load(Ordering::Relaxed) {
        return Err(ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: "the server is shutting down".into(),
            reason: "unavailable",
        });
    }
    let (json_part, binary) = split_body(headers, &body)?;
    let request: InferRequestJson =
        serde_json::from_slice(json_part).map_err(|e| ApiError::invalid(format!("malformed JSON request: {e}")))?;
    let hints = RequestHints::from_parameters(&request.parameters)?;
    let inputs = kserve::decode_inputs(&request, binary, &model.metadata, model.max_batch_size)?;
    // Triton: a request's timeout may only shorten the configured one.
    let requested = hints.timeout_us.map(Duration::from_micros);
    let timeout = match (requested, model.batch_config.default_timeout) {
        (Some(r), Some(d)) => Some(r.min(d)),
        (r, d) => r.or(d),
    };
    let answer = model
        .queue
        .infer(InferRequest {
            inputs,
            priority: hints.priority,
            timeout,
        })
        .await
        .map_err(|e| ApiError::from_router(&e))?;

    let selected = kserve::select_outputs(&request, &answer.outputs, &hints)?;
    let mut binary_out = Vec::new();
    let mut outputs = Vec::with_capacity(selected.len());
    for (tensor, as_binary) in &selected {
        let shape = tensor.tensor.shape();
        if *as_binary {
            let before = binary_out.len();
            kserve::encode_binary(tensor.tensor.data(), &mut binary_out);
            outputs.push(OutputJson {
                name: &tensor.name,
                datatype: tensor.tensor.dtype().name(),
                shape,
                parameters: Some(json!({ "binary_data_size": binary_out.len() - before })),
                data: None,
            });
        } else {
            outputs.push(OutputJson {
                name: &tensor.name,
                datatype: tensor.tensor.dtype().name(),
                shape,
                parameters: None,
                data: Some(kserve::JsonData(tensor.tensor.data())),
            });
        }
    }
    let response = InferResponseJson {
        model_name: &model.name,
        model_version: &model.version,
        id: request.id.as_deref(),
        parameters: Default::default(),
        outputs,
    };
    let mut header_json = serde_json::to_vec(&response).map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("cannot encode the response: {e}"),
        reason: "internal",
    })?;
    model.metrics.success(started.elapsed(), &answer.timings);
    if binary_out.is_empty() && selected.iter().all(|(_, b)| !b) {
        return Ok((
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            header_json,
        )
            .into_response());
    }
    let json_length = header_json.len();
    header_json.extend_from_slice(&binary_out);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (
                header::HeaderName::from_static(HEADER_LENGTH),
                HeaderValue::from(json_length),
            ),
        ],
        header_json,
    )
        .into_response())
}
