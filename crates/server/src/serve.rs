//! Running the server: binding, the optional metrics port, graceful shutdown.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::state::AppState;

/// Where to listen.
#[derive(Clone, Debug)]
pub struct Listen {
    /// Address of the API (127.0.0.1 by default; port 0 picks a free port).
    pub addr: SocketAddr,
    /// Optional separate address serving only `/metrics`.
    pub metrics_addr: Option<SocketAddr>,
}

/// Serves until SIGTERM or Ctrl-C, then stops accepting (readiness turns false),
/// lets in-flight requests finish, and returns.
///
/// `on_bound` is called with the bound addresses once listening (the CLI prints
/// them, tests read them).
pub async fn serve(
    state: Arc<AppState>,
    listen: Listen,
    on_bound: impl FnOnce(SocketAddr, Option<SocketAddr>),
) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen.addr).await?;
    let bound = listener.local_addr()?;
    let metrics_listener = match listen.metrics_addr {
        Some(addr) => Some(TcpListener::bind(addr).await?),
        None => None,
    };
    let metrics_bound = metrics_listener.as_ref().map(|l| l.local_addr()).transpose()?;
    on_bound(bound, metrics_bound);
    if let Some(listener) = metrics_listener {
        let app = crate::routes::metrics_app(state.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!("metrics server stopped: {e}");
            }
        });
    }
    let draining = state.clone();
    axum::serve(listener, crate::routes::app(state))
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            draining.accepting.store(false, Ordering::Relaxed);
            tracing::info!("shutting down: draining in-flight requests");
        })
        .await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
