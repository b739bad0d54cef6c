//! The per-model queue: a cloneable handle ([`ModelQueue`]), the batching logic
//! ([`BatcherState`]) and the task that owns it (`queue_task`).

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hinfer_core::{NamedTensor, Tensor};
use hinfer_runtime::WorkerPool;
use tokio::sync::{mpsc, oneshot};

use crate::batcher::{BatchConfig, BatcherState, Entry, Next, QueueFull};
use crate::{Error, Result};

/// One inference request as the router sees it.
#[derive(Debug)]
pub struct InferRequest {
    /// Validated inputs; with batching, the first dimension is the batch.
    pub inputs: Vec<NamedTensor>,
    /// Triton's `priority` parameter: 0 default, 1 highest.
    pub priority: u32,
    /// Triton's `timeout`: how long the request may wait before it starts.
    pub timeout: Option<Duration>,
}

/// Where the time of one request went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// From arrival in the queue to the start of its batch.
    pub queue: Duration,
    /// Assembling the batch's input tensors.
    pub compute_input: Duration,
    /// Running the batch on the backend.
    pub compute_infer: Duration,
    /// Splitting the batch's outputs.
    pub compute_output: Duration,
}

/// The answer to one request.
#[derive(Debug)]
pub struct InferResponse {
    /// Outputs in model order, this request's rows only.
    pub outputs: Vec<NamedTensor>,
    pub timings: Timings,
    /// Rows in the batch this request ran in.
    pub batch_size: usize,
}

/// Counts for one batch size (Triton's `batch_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSizeStats {
    pub count: u64,
    pub compute_input: Duration,
    pub compute_infer: Duration,
    pub compute_output: Duration,
}

/// Live counters of a queue.
#[derive(Debug, Default)]
pub struct QueueStats {
    /// Requests queued or running.
    pub pending: AtomicUsize,
    /// Batches executed.
    pub executions: AtomicU64,
    /// Rows inferred (sum of batch sizes).
    pub inferences: AtomicU64,
    /// Per batch size, in rows.
    pub by_batch_size: Mutex<BTreeMap<usize, BatchSizeStats>>,
}

/// What travels through the queue with each request.
struct Pending {
    inputs: Vec<NamedTensor>,
    reply: oneshot::Sender<Result<InferResponse>>,
    timeout: Option<Duration>,
}

enum Message {
    Request(Entry<Pending>),
    BatchDone,
}

/// A model's queue and batcher; clone it freely.
#[derive(Clone)]
pub struct ModelQueue {
    sender: mpsc::UnboundedSender<Message>,
    config: Arc<BatchConfig>,
    stats: Arc<QueueStats>,
    model: Arc<str>,
}

impl ModelQueue {
    /// Starts the queue task for `pool` on the current tokio runtime.
    pub fn start(model: &str, pool: Arc<WorkerPool>, config: BatchConfig) -> ModelQueue {
        let (sender, receiver) = mpsc::unbounded_channel();
        let stats = Arc::new(QueueStats::default());
        let queue = ModelQueue {
            sender: sender.clone(),
            config: Arc::new(config.clone()),
            stats: stats.clone(),
            model: model.into(),
        };
        tokio::spawn(queue_task(QueueTask {
            state: BatcherState::new(config),
            receiver,
            done: sender.downgrade(),
            pool,
            stats,
            model: model.into(),
            in_flight: 0,
        }));
        queue
    }

    /// The batching configuration.
    pub fn config(&self) -> &BatchConfig {
        &self.config
    }

    /// Live counters.
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }

    /// Queues a request and waits for its answer.
    ///
    /// A full queue answers [`Error::QueueFull`] at once; a request still waiting
    /// when its timeout passes answers [`Error::TimedOut`] without running.
    pub async fn infer(&self, request: InferRequest) -> Result<InferResponse> {
        let now = Instant::now();
        let timeout = request.timeout.or(self.config.default_timeout);
        let rows = if self.config.batching() {
            request
                .inputs
                .first()
                .and_then(|t| t.tensor.shape().first().copied())
                .unwrap_or(1)
        } else {
            1
        };
        let (reply, answer) = oneshot::channel();
        let entry = Entry {
            rows,
            level: self.config.level_of(request.priority),
            arrival: now,
            deadline: timeout.map(|t| now + t),
            group: shape_group(&request.inputs),
            payload: Pending {
                inputs: request.inputs,
                reply,
                timeout,
            },
        };
        self.stats.pending.fetch_add(1, Ordering::Relaxed);
        let _pending = PendingGuard(&self.stats.pending);
        self.sender
            .send(Message::Request(entry))
            .map_err(|_| Error::ShuttingDown {
                model: self.model.to_string(),
            })?;
        answer.await.map_err(|_| Error::ShuttingDown {
            model: self.model.to_string(),
        })?
    }
}

/// Decrements the pending count when a request is answered or abandoned.
struct PendingGuard<'a>(&'a AtomicUsize);

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Requests whose inputs agree past the batch dimension share a group.
fn shape_group(inputs: &[NamedTensor]) -> u64 {
    let mut h = DefaultHasher::new();
    for t in inputs {
        t.name.hash(&mut h);
        t.tensor.dtype().hash(&mut h);
        t.tensor.shape().get(1..).hash(&mut h);
    }
    h.finish()
}

struct QueueTask {
    state: BatcherState<Pending>,
    receiver: mpsc::UnboundedReceiver<Message>,
    /// Weak, so that the task ends once every handle is dropped and work is done.
    done: mpsc::WeakUnboundedSender<Message>,
    pool: Arc<WorkerPool>,
    stats: Arc<QueueStats>,
    model: Arc<str>,
    in_flight: usize,
}

async fn queue_task(mut task: QueueTask) {
    let workers = task.pool.worker_count().max(1);
    loop {
        let now = Instant::now();
        for expired in task.state.expire(now) {
            let waited = now.saturating_duration_since(expired.arrival);
            let timeout = expired.payload.timeout.unwrap_or_default();
            let _ = expired.payload.reply.send(Err(Error::TimedOut { waited, timeout }));
        }
        // Form batches only while a worker is free, so that batches grow under load.
        let mut wake_at = None;
        while task.in_flight < workers {
            match task.state.next_batch(now) {
                Next::Batch(batch) => task.dispatch(batch, now),
                Next::WaitUntil(at) => {
                    wake_at = Some(at);
                    break;
                }
                Next::Idle => break,
            }
        }
        if task.in_flight >= workers {
            // Still wake for deadlines of queued requests.
            wake_at = task.state.next_deadline();
        }
        let sleep = async {
            match wake_at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            message = task.receiver.recv() => match message {
                Some(Message::Request(entry)) => {
                    if let Err(QueueFull(entry)) = task.state.push(entry) {
                        let max = task.state.config().max_queue_size.unwrap_or(0);
                        let _ = entry.payload.reply.send(Err(Error::QueueFull { model: task.model.to_string(), max }));
                    }
                }
                Some(Message::BatchDone) => task.in_flight -= 1,
                None => return,
            },
            _ = sleep => {}
        }
    }
}

impl QueueTask {
    /// Assembles a batch and hands it to the worker pool; the pool's callback
    /// splits the outputs, answers each request and reports the worker free.
    fn dispatch(&mut self, batch: Vec<Entry<Pending>>, now: Instant) {
        let started = Instant::now();
        let rows: Vec<usize> = batch.iter().map(|e| e.rows).collect();
        let total: usize = rows.iter().sum();
        let queue_times: Vec<Duration> = batch.iter().map(|e| now.saturating_duration_since(e.arrival)).collect();
        let (inputs, replies) = match assemble(batch) {
            Ok(parts) => parts,
            Err((e, replies)) => {
                for reply in replies {
                    let _ = reply.send(Err(Error::Core(hinfer_core::Error::Unsupported(e.to_string()))));
                }
                return;
            }
        };
        let compute_input = started.elapsed();
        let stats = self.stats.clone();
        let Some(done) = self.done.upgrade() else { return };
        let infer_started = Instant::now();
        let batched = replies.len() > 1;
        let callback = move |outcome: hinfer_runtime::Result<Vec<NamedTensor>>| {
            let compute_infer = infer_started.elapsed();
            let split_started = Instant::now();
            let answers: Vec<Result<Vec<NamedTensor>>> = match outcome {
                Ok(outputs) if batched => split(outputs, &rows),
                Ok(outputs) => vec![Ok(outputs)],
                Err(e) => {
                    let message = e.to_string();
                    let label = e.label();
                    let mut first = Some(e);
                    rows.iter()
                        .map(|_| {
                            Err(first.take().map_or_else(
                                || Error::BatchFailed {
                                    message: message.clone(),
                                    label,
                                },
                                Error::Runtime,
                            ))
                        })
                        .collect()
                }
            };
            let compute_output = split_started.elapsed();
            stats.executions.fetch_add(1, Ordering::Relaxed);
            stats.inferences.fetch_add(total as u64, Ordering::Relaxed);
            if let Ok(mut by_size) = stats.by_batch_size.lock() {
                let s = by_size.entry(total).or_default();
                s.count += 1;
                s.compute_input += compute_input;
                s.compute_infer += compute_infer;
                s.compute_output += compute_output;
            }
            for ((reply, answer), queue) in replies.into_iter().zip(answers).zip(queue_times) {
                let timings = Timings {
                    queue,
                    compute_input,
                    compute_infer,
                    compute_output,
                };
                let _ = reply.send(answer.map(|outputs| InferResponse {
                    outputs,
                    timings,
                    batch_size: total,
                }));
            }
            let _ = done.send(Message::BatchDone);
        };
        match self.pool.submit(inputs, callback) {
            Ok(()) => self.in_flight += 1,
            Err(e) => tracing::error!(model = %self.model, "the worker pool refused a batch: {e}"),
        }
    }
}

type Replies = Vec<oneshot::Sender<Result<InferResponse>>>;

/// Concatenates the requests' inputs along the batch dimension, by input name.
fn assemble(
    batch: Vec<Entry<Pending>>,
) -> std::result::Result<(Vec<NamedTensor>, Replies), (hinfer_core::Error, Replies)> {
    let mut replies = Vec::with_capacity(batch.len());
    let mut inputs_per_request = Vec::with_capacity(batch.len());
    for e in batch {
        replies.push(e.payload.reply);
        inputs_per_request.push(e.payload.inputs);
    }
    if inputs_per_request.len() == 1 {
        return Ok((inputs_per_request.pop().expect("one request"), replies));
    }
    let names: Vec<String> = inputs_per_request[0].iter().map(|t| t.name.clone()).collect();
    let mut joined = Vec::with_capacity(names.len());
    for name in names {
        let parts: Vec<&Tensor> = inputs_per_request
            .iter()
            .filter_map(|r| r.iter().find(|t| t.name == name).map(|t| &t.tensor))
            .collect();
        match Tensor::concat_batch(&parts) {
            Ok(t) => joined.push(NamedTensor::new(name, t)),
            Err(e) => return Err((e, replies)),
        }
    }
    Ok((joined, replies))
}

/// Splits each output of a batch back into the requests' rows.
fn split(outputs: Vec<NamedTensor>, rows: &[usize]) -> Vec<Result<Vec<NamedTensor>>> {
    let mut per_request: Vec<Vec<NamedTensor>> = rows.iter().map(|_| Vec::with_capacity(outputs.len())).collect();
    for output in outputs {
        match output.tensor.split_batch(rows) {
            Ok(parts) => {
                for (request, part) in per_request.iter_mut().zip(parts) {
                    request.push(NamedTensor::new(output.name.clone(), part));
                }
            }
            Err(e) => {
                let message = format!("output `{}` cannot be split by batch: {e}", output.name);
                return rows
                    .iter()
                    .map(|_| {
                        Err(Error::BatchFailed {
                            message: message.clone(),
                            label: "backend",
                        })
                    })
                    .collect();
            }
        }
    }
    per_request.into_iter().map(Ok).collect()
}
