//! The queue task end to end on the fixture MLP (tract): batches form under
//! load, every request gets its own rows back, timeouts and a full queue are
//! answered without running.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hinfer_core::{assert_close, npy, BackendKind, ModelSource, NamedTensor, Tensor, Tolerance};
use hinfer_router::{BatchConfig, Error, InferRequest, ModelQueue};
use hinfer_runtime::{PoolConfig, ThreadBudget, WarmupPlan, WorkerPool};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

fn pool() -> Arc<WorkerPool> {
    let backend = hinfer_backends::create(BackendKind::Tract).unwrap();
    let source = ModelSource::from_file(&fixture("digits_mlp.onnx")).unwrap();
    let config = PoolConfig {
        workers: 1,
        budget: ThreadBudget { cores: 1 },
        warmup: WarmupPlan {
            batch_sizes: vec![1],
            ..WarmupPlan::default()
        },
        ..PoolConfig::default()
    };
    Arc::new(WorkerPool::start(backend.as_ref(), &source, &config).unwrap())
}

fn row(x: &Tensor, i: usize) -> Tensor {
    x.split_batch(&[i, 1, x.shape()[0] - i - 1]).unwrap().swap_remove(1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_are_batched_and_answered_with_their_own_rows() {
    let x = npy::read(&fixture("digits_mlp_input.npy")).unwrap();
    let expected = npy::read(&fixture("digits_mlp_logits.npy")).unwrap();
    let config = BatchConfig {
        max_batch_size: 16,
        max_queue_delay: Duration::from_millis(5),
        ..BatchConfig::default()
    };
    let queue = ModelQueue::start("mlp", pool(), config);
    let mut handles = vec![];
    for i in 0..48 {
        let queue = queue.clone();
        let input = row(&x, i);
        handles.push(tokio::spawn(async move {
            let request = InferRequest {
                inputs: vec![NamedTensor::new("input", input)],
                priority: 0,
                timeout: None,
            };
            (i, queue.infer(request).await)
        }));
    }
    let mut largest = 0;
    for h in handles {
        let (i, answer) = h.await.unwrap();
        let answer = answer.unwrap();
        largest = largest.max(answer.batch_size);
        assert_close(&answer.outputs[0].tensor, &row(&expected, i), Tolerance::Close).unwrap();
    }
    let executions = queue.stats().executions.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        executions < 48,
        "{executions} executions for 48 requests: nothing was batched"
    );
    assert!(largest > 1 && largest <= 16, "largest batch {largest}");
    assert_eq!(queue.stats().inferences.load(std::sync::atomic::Ordering::Relaxed), 48);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_a_full_queue_are_answered_without_running() {
    let x = npy::read(&fixture("digits_mlp_input.npy")).unwrap();
    let config = BatchConfig {
        max_batch_size: 64,
        // A long delay keeps requests queued, so timeouts and the queue limit show.
        max_queue_delay: Duration::from_millis(300),
        max_queue_size: Some(3),
        ..BatchConfig::default()
    };
    let queue = ModelQueue::start("mlp", pool(), config);
    let request = |timeout| InferRequest {
        inputs: vec![NamedTensor::new("input", row(&x, 0))],
        priority: 0,
        timeout,
    };
    let (short, a, b, rejected) = tokio::join!(
        queue.infer(request(Some(Duration::from_millis(20)))),
        queue.infer(request(None)),
        queue.infer(request(None)),
        async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            queue.infer(request(None)).await
        }
    );
    assert!(matches!(short, Err(Error::TimedOut { .. })), "{short:?}");
    assert!(a.is_ok() && b.is_ok());
    // When the fourth request arrived, three were queued.
    let err = rejected.unwrap_err();
    assert_eq!(err.label(), "overloaded", "{err}");
    assert_eq!(queue.stats().executions.load(std::sync::atomic::Ordering::Relaxed), 1);
}
