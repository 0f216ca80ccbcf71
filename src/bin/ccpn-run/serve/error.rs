//! What can stop `ccpn-run serve`, and what a request can be refused for.

use std::net::SocketAddr;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why the server cannot start (or stopped).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// Bad flags, refused for safety among others.
    #[error("{0}")]
    Args(String),
    /// The net does not load.
    #[error("{0}")]
    Net(String),
    /// A sink or broker address that cannot be used.
    #[error("{flag} {url}: {why}")]
    Url {
        flag: &'static str,
        url: String,
        why: String,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, #[source] std::io::Error),
    #[error("cannot start the detector thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("the server failed: {0}")]
    Serve(#[source] std::io::Error),
    /// `--resume`'s file cannot be read, or is not a server's checkpoint.
    #[error("{0}")]
    Resume(#[source] crate::checkpoint::CheckpointError),
    /// `--resume`'s checkpoint cannot be resumed from.
    #[error("checkpoint {}: {why}", path.display())]
    Checkpoint {
        path: std::path::PathBuf,
        why: String,
    },
    /// Checkpoints failed while serving (each was reported then).
    #[error("{0} checkpoint(s) could not be written (see above): the state after the last one written is lost")]
    CheckpointsFailed(u64),
}

impl ServeError {
    /// The exit status: 2 for what the user gave, 5 when checkpoints failed (as the
    /// batch run), 1 for the rest.
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            ServeError::Args(_)
            | ServeError::Net(_)
            | ServeError::Url { .. }
            | ServeError::Resume(_)
            | ServeError::Checkpoint { .. } => 2,
            ServeError::CheckpointsFailed(_) => 5,
            _ => 1,
        }
    }
}

/// A request refused: its status and the reason, answered as
/// `{"error": "…"}`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    #[error("missing or wrong bearer token (Authorization: Bearer TOKEN)")]
    Unauthorized,
    #[error("{0}")]
    BadRequest(String),
    #[error(
        "unsupported content type {0:?}: send JSON Lines (application/x-ndjson) or CSV (text/csv)"
    )]
    ContentType(String),
    #[error("the request body is larger than --max-body-bytes {0}")]
    TooLarge(u64),
    #[error("the detector has stopped")]
    Stopped,
    #[error("cannot read the request body: {0}")]
    Body(String),
}

impl Refused {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Refused::Unauthorized => StatusCode::UNAUTHORIZED,
            Refused::BadRequest(_) | Refused::Body(_) => StatusCode::BAD_REQUEST,
            Refused::ContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Refused::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Refused::Stopped => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.to_string()});
        let mut response = (self.status(), axum::Json(body)).into_response();
        if matches!(self, Refused::Unauthorized) {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
