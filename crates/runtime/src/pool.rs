//! A pool of worker threads running one prepared model.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Instant;

use hinfer_core::{Backend, ModelMetadata, ModelRunner, ModelSource, NamedTensor, PreparedModel, SessionOptions};

use crate::{synthetic_inputs, CpuGate, Error, Result, ThreadBudget, WarmupPlan};

/// Whether a pool can take work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// Workers are starting or warming up.
    Loading,
    /// Every worker is warmed up and waiting for jobs.
    Ready,
    /// The pool cannot serve; the reason says why.
    Failed(String),
}

/// How to run a model.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Worker threads, each with its own runner.
    pub workers: usize,
    /// Intra-op threads per worker; unset shares the budget evenly.
    pub threads_per_worker: Option<usize>,
    /// Allow more busy threads than the budget.
    pub allow_oversubscribe: bool,
    /// The CPU threads available.
    pub budget: ThreadBudget,
    /// Jobs that may wait in the queue before `submit` answers `Overloaded`.
    pub queue_capacity: usize,
    /// Backend graph optimisation.
    pub optimize: bool,
    /// Warm-up to do before reporting ready.
    pub warmup: WarmupPlan,
    /// A machine-wide gate shared with other pools; each run holds its worker's
    /// thread count of tokens. `None` runs ungated.
    pub cpu_gate: Option<Arc<CpuGate>>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            workers: 1,
            threads_per_worker: None,
            allow_oversubscribe: false,
            budget: ThreadBudget::detect(),
            queue_capacity: 1024,
            optimize: true,
            warmup: WarmupPlan::default(),
            cpu_gate: None,
        }
    }
}

/// Counters of a pool's work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Jobs run successfully.
    pub succeeded: u64,
    /// Jobs that failed (bad input, backend error, panic).
    pub failed: u64,
}

type Reply = Box<dyn FnOnce(Result<Vec<NamedTensor>>) + Send>;

struct Job {
    inputs: Vec<NamedTensor>,
    reply: Reply,
}

struct Shared {
    health: RwLock<Health>,
    succeeded: AtomicU64,
    failed: AtomicU64,
}

/// Worker threads that each own a runner of the same prepared model.
pub struct WorkerPool {
    sender: Option<SyncSender<Job>>,
    workers: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
    metadata: ModelMetadata,
    threads_per_worker: usize,
    queue_capacity: usize,
    label: String,
}

impl WorkerPool {
    /// Prepares `model` on `backend`, starts the workers and warms each one up.
    ///
    /// Returns once every worker is ready; a warm-up failure is an error naming
    /// the batch size that failed, and no pool is left running.
    pub fn start(backend: &dyn Backend, model: &ModelSource, config: &PoolConfig) -> Result<WorkerPool> {
        let threads =
            config
                .budget
                .per_worker(config.workers, config.threads_per_worker, config.allow_oversubscribe)?;
        let options = SessionOptions {
            intra_threads: threads,
            optimize: config.optimize,
        };
        let prepared = backend.prepare(model, &options)?;
        let metadata = prepared.metadata().clone();
        let shared = Arc::new(Shared {
            health: RwLock::new(Health::Loading),
            succeeded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        });
        let capacity = config.queue_capacity.max(1);
        let (sender, receiver) = mpsc::sync_channel::<Job>(capacity);
        let receiver = Arc::new(Mutex::new(receiver));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let mut workers = Vec::with_capacity(config.workers.max(1));
        for index in 0..config.workers.max(1) {
            let worker = Worker {
                prepared: prepared.clone(),
                receiver: receiver.clone(),
                shared: shared.clone(),
                label: model.label.clone(),
                gate: config.cpu_gate.clone(),
                threads,
            };
            let warmup = config.warmup.clone();
            let ready = ready_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("hinfer-worker-{index}"))
                .spawn(move || worker.main(&warmup, ready))
                .map_err(|e| hinfer_core::Error::Config(format!("cannot start a worker thread: {e}")))?;
            workers.push(handle);
        }
        drop(ready_tx);
        let mut pool = WorkerPool {
            sender: Some(sender),
            workers,
            shared,
            metadata,
            threads_per_worker: threads,
            queue_capacity: capacity,
            label: model.label.clone(),
        };
        for _ in 0..pool.workers.len() {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    pool.set_health(Health::Failed(e.to_string()));
                    return Err(e);
                }
                Err(_) => return Err(Error::ShutDown),
            }
        }
        pool.set_health(Health::Ready);
        tracing::info!(model = %pool.label, workers = pool.workers.len(), threads, "model ready");
        Ok(pool)
    }

    /// The model's inputs and outputs.
    pub fn metadata(&self) -> &ModelMetadata {
        &self.metadata
    }

    /// Intra-op threads each worker runs with.
    pub fn threads_per_worker(&self) -> usize {
        self.threads_per_worker
    }

    /// Number of worker threads.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Current health.
    pub fn health(&self) -> Health {
        self.shared
            .health
            .read()
            .map(|h| h.clone())
            .unwrap_or(Health::Failed("health lock poisoned".into()))
    }

    /// Jobs run so far.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            succeeded: self.shared.succeeded.load(Ordering::Relaxed),
            failed: self.shared.failed.load(Ordering::Relaxed),
        }
    }

    fn set_health(&mut self, health: Health) {
        if let Ok(mut h) = self.shared.health.write() {
            *h = health;
        }
    }

    /// Queues a job; `reply` is called from a worker thread with the outcome.
    ///
    /// Never blocks: a full queue answers [`Error::Overloaded`] at once.
    pub fn submit(
        &self,
        inputs: Vec<NamedTensor>,
        reply: impl FnOnce(Result<Vec<NamedTensor>>) + Send + 'static,
    ) -> Result<()> {
        let sender = self.sender.as_ref().ok_or(Error::ShutDown)?;
        match sender.try_send(Job {
            inputs,
            reply: Box::new(reply),
        }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(Error::Overloaded {
                capacity: self.queue_capacity,
            }),
            Err(TrySendError::Disconnected(_)) => Err(Error::ShutDown),
        }
    }

    /// Runs one job and waits for its outcome.
    pub fn run(&self, inputs: Vec<NamedTensor>) -> Result<Vec<NamedTensor>> {
        let (tx, rx) = mpsc::channel();
        self.submit(inputs, move |outcome| {
            let _ = tx.send(outcome);
        })?;
        rx.recv().map_err(|_| Error::ShutDown)?
    }

    /// Stops taking jobs, lets the workers finish the queued ones, and joins them.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.sender = None;
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One worker thread's state.
struct Worker {
    prepared: Arc<dyn PreparedModel>,
    receiver: Arc<Mutex<Receiver<Job>>>,
    shared: Arc<Shared>,
    label: String,
    gate: Option<Arc<CpuGate>>,
    threads: usize,
}

impl Worker {
    fn main(self, warmup: &WarmupPlan, ready: mpsc::Sender<Result<()>>) {
        let mut runner = match self.spawn_and_warm(warmup) {
            Ok(r) => {
                let _ = ready.send(Ok(()));
                r
            }
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        drop(ready);
        loop {
            let job = match self.receiver.lock() {
                Ok(rx) => rx.recv(),
                Err(_) => return,
            };
            let Ok(job) = job else { return };
            let permit = self.gate.as_ref().map(|g| g.acquire(self.threads));
            let outcome = catch_unwind(AssertUnwindSafe(|| runner.run(&job.inputs)));
            drop(permit);
            let result = match outcome {
                Ok(r) => r.map_err(Error::from),
                Err(panic) => {
                    let message = panic_message(&panic);
                    tracing::error!(model = %self.label, %message, "worker panicked; restarting its runner");
                    match self.prepared.spawn() {
                        Ok(fresh) => runner = fresh,
                        Err(e) => tracing::error!(model = %self.label, "cannot restart runner: {e}"),
                    }
                    Err(Error::WorkerPanicked(message))
                }
            };
            let counter = if result.is_ok() {
                &self.shared.succeeded
            } else {
                &self.shared.failed
            };
            counter.fetch_add(1, Ordering::Relaxed);
            (job.reply)(result);
        }
    }

    fn spawn_and_warm(&self, plan: &WarmupPlan) -> Result<Box<dyn ModelRunner>> {
        let mut runner = self.prepared.spawn()?;
        let metadata = self.prepared.metadata();
        for &batch in &plan.batch_sizes {
            let inputs = synthetic_inputs(metadata, batch, plan);
            let started = Instant::now();
            runner.run(&inputs).map_err(|source| Error::WarmupFailed {
                model: self.label.clone(),
                batch,
                source,
            })?;
            tracing::debug!(model = %self.label, batch, elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "warm-up");
        }
        Ok(runner)
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hinfer_core::{BackendKind, DType, Dim, Shape, Tensor, TensorSpec};

    /// A backend whose model doubles its input, refuses batch 3, and panics on batch 5:
    /// enough to test the pool's behaviour without a real engine.
    struct Doubler;
    struct DoublerModel(ModelMetadata);
    struct DoublerRunner;

    impl Backend for Doubler {
        fn kind(&self) -> BackendKind {
            BackendKind::Tract
        }
        fn describe(&self) -> String {
            "doubler".into()
        }
        fn prepare(&self, _: &ModelSource, _: &SessionOptions) -> hinfer_core::Result<Arc<dyn PreparedModel>> {
            let spec = TensorSpec {
                name: "x".into(),
                dtype: DType::F32,
                shape: Shape(vec![Dim::Dynamic(None), Dim::Fixed(2)]),
            };
            Ok(Arc::new(DoublerModel(ModelMetadata {
                inputs: vec![spec.clone()],
                outputs: vec![spec],
            })))
        }
    }
    impl PreparedModel for DoublerModel {
        fn metadata(&self) -> &ModelMetadata {
            &self.0
        }
        fn spawn(&self) -> hinfer_core::Result<Box<dyn ModelRunner>> {
            Ok(Box::new(DoublerRunner))
        }
    }
    impl ModelRunner for DoublerRunner {
        fn run(&mut self, inputs: &[NamedTensor]) -> hinfer_core::Result<Vec<NamedTensor>> {
            let t = &inputs[0].tensor;
            match t.shape()[0] {
                3 => Err(hinfer_core::Error::Unsupported("batch 3".into())),
                5 => panic!("batch 5"),
                _ => {
                    let v: Vec<f32> = t.as_slice::<f32>()?.iter().map(|x| x * 2.0).collect();
                    Ok(vec![NamedTensor::new("x", Tensor::from_vec(t.shape().to_vec(), v)?)])
                }
            }
        }
    }

    fn source() -> ModelSource {
        ModelSource::from_bytes("doubler", vec![0u8])
    }

    fn config(workers: usize, batches: Vec<usize>) -> PoolConfig {
        PoolConfig {
            workers,
            budget: ThreadBudget { cores: 4 },
            warmup: WarmupPlan {
                batch_sizes: batches,
                ..WarmupPlan::default()
            },
            ..PoolConfig::default()
        }
    }

    fn input(batch: usize) -> Vec<NamedTensor> {
        vec![NamedTensor::new(
            "x",
            Tensor::from_vec(vec![batch, 2], vec![1f32; batch * 2]).unwrap(),
        )]
    }

    #[test]
    fn warms_up_then_runs_jobs() {
        let pool = WorkerPool::start(&Doubler, &source(), &config(2, vec![1, 4])).unwrap();
        assert_eq!(pool.health(), Health::Ready);
        assert_eq!(pool.threads_per_worker(), 2);
        let out = pool.run(input(2)).unwrap();
        assert_eq!(out[0].tensor.as_slice::<f32>().unwrap(), &[2.0; 4]);
        assert_eq!(
            pool.stats(),
            PoolStats {
                succeeded: 1,
                failed: 0
            }
        );
    }

    #[test]
    fn warmup_failure_names_the_batch() {
        let err = WorkerPool::start(&Doubler, &source(), &config(1, vec![1, 3]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("batch 3"), "{err}");
    }

    #[test]
    fn a_panicking_job_fails_alone_and_the_worker_survives() {
        let pool = WorkerPool::start(&Doubler, &source(), &config(1, vec![])).unwrap();
        let err = pool.run(input(5)).unwrap_err();
        assert!(matches!(err, Error::WorkerPanicked(_)), "{err}");
        assert!(pool.run(input(1)).is_ok());
        assert_eq!(
            pool.stats(),
            PoolStats {
                succeeded: 1,
                failed: 1
            }
        );
    }

    #[test]
    fn oversubscription_is_refused() {
        let cfg = PoolConfig {
            threads_per_worker: Some(3),
            ..config(2, vec![])
        };
        assert!(matches!(
            WorkerPool::start(&Doubler, &source(), &cfg),
            Err(Error::Oversubscribed { .. })
        ));
    }

    #[test]
    fn a_full_queue_answers_overloaded_and_accepted_jobs_complete() {
        let pool = WorkerPool::start(
            &Doubler,
            &source(),
            &PoolConfig {
                queue_capacity: 2,
                ..config(1, vec![])
            },
        )
        .unwrap();
        let (tx, rx) = mpsc::channel();
        let mut accepted = 0;
        let mut rejected = 0;
        for _ in 0..200 {
            let tx = tx.clone();
            match pool.submit(input(1), move |r| tx.send(r.is_ok()).unwrap()) {
                Ok(()) => accepted += 1,
                Err(Error::Overloaded { capacity: 2 }) => rejected += 1,
                Err(e) => panic!("{e}"),
            }
        }
        drop(tx);
        let answered: Vec<bool> = rx.iter().collect();
        assert_eq!(answered.len(), accepted);
        assert!(answered.iter().all(|&ok| ok));
        assert_eq!(accepted + rejected, 200);
    }
}
