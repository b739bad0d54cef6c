//! API errors: one JSON shape, `{"error": "..."}`, and Triton's status mapping.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status (Triton's mapping: invalid 400, not found 404, overloaded 503,
    /// timed out in queue 504, unsupported 501, internal 500).
    pub status: StatusCode,
    /// Message naming what is wrong.
    pub message: String,
    /// Stable label for the failure metric (`invalid_input`, `overloaded`, ...).
    pub reason: &'static str,
}

impl ApiError {
    /// 400: the request is malformed or does not fit the model.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            reason: "invalid_input",
        }
    }

    /// 404: unknown model, version or route.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            reason: "not_found",
        }
    }

    /// 401: missing or wrong bearer token.
    pub fn unauthorized() -> ApiError {
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            message: "missing or invalid bearer token (send `Authorization: Bearer <token>`)".into(),
            reason: "unauthorized",
        }
    }

    /// Maps a router error by its label.
    pub fn from_router(e: &hinfer_router::Error) -> ApiError {
        let reason = e.label();
        let status = match reason {
            "invalid_input" => StatusCode::BAD_REQUEST,
            "overloaded" | "unavailable" => StatusCode::SERVICE_UNAVAILABLE,
            "timeout" => StatusCode::GATEWAY_TIMEOUT,
            "unsupported" => StatusCode::NOT_IMPLEMENTED,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            message: e.to_string(),
            reason,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}
