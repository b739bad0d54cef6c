//! Dynamic batching with Triton's semantics, as plain logic: no channels, no
//! clocks of its own (every method takes `now`), so it is unit-tested directly.
//!
//! - Requests wait in one FIFO queue per priority level; level 0 is served first.
//! - A batch takes requests in priority-then-arrival order while their rows fit
//!   in `max_batch_size` (a request is never split). Only requests of the same
//!   `group` (inputs whose shapes agree past the batch dimension) are combined;
//!   the others wait for a later batch.
//! - A batch is sent at once when it is full or reaches a preferred size;
//!   otherwise when its oldest request has waited `max_queue_delay`.
//! - A request whose deadline (its `timeout`) passes while queued is expired
//!   before execution; a push into a full queue is refused at once.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Batching configuration of one model (Triton's `dynamic_batching`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchConfig {
    /// Largest batch, in rows. 0 or 1 disables batching: requests run one by one.
    pub max_batch_size: usize,
    /// How long the oldest request may wait for a larger batch to form.
    pub max_queue_delay: Duration,
    /// Batch sizes sent as soon as they can be formed (empty: only full batches).
    pub preferred_batch_sizes: Vec<usize>,
    /// Number of priority levels (at least 1); requests give 1..=levels, 0 means default.
    pub priority_levels: u32,
    /// Level used when a request gives none (1-based, as in Triton).
    pub default_priority_level: u32,
    /// Requests that may wait, over all levels; `None` is unbounded.
    pub max_queue_size: Option<usize>,
    /// Timeout applied to requests that give none; `None` is no timeout.
    pub default_timeout: Option<Duration>,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            max_batch_size: 8,
            max_queue_delay: Duration::from_micros(500),
            preferred_batch_sizes: vec![],
            priority_levels: 1,
            default_priority_level: 1,
            max_queue_size: None,
            default_timeout: None,
        }
    }
}

impl BatchConfig {
    /// True when requests may be combined.
    pub fn batching(&self) -> bool {
        self.max_batch_size > 1
    }

    /// The 0-based queue index for a request's `priority` parameter (0 = default;
    /// values above the number of levels use the lowest priority, as Triton does).
    pub fn level_of(&self, priority: u32) -> usize {
        let levels = self.priority_levels.max(1);
        let p = if priority == 0 {
            self.default_priority_level.clamp(1, levels)
        } else {
            priority.min(levels)
        };
        (p - 1) as usize
    }
}

/// One queued request.
#[derive(Debug)]
pub struct Entry<T> {
    /// Rows this request adds to a batch (its first dimension).
    pub rows: usize,
    /// Queue index (see [`BatchConfig::level_of`]).
    pub level: usize,
    /// When it arrived.
    pub arrival: Instant,
    /// When it must have started executing, if ever.
    pub deadline: Option<Instant>,
    /// Requests can share a batch only if their groups are equal (e.g. a hash of
    /// their input shapes without the batch dimension).
    pub group: u64,
    /// What the caller needs to run and answer it.
    pub payload: T,
}

/// What the batcher says to do next.
#[derive(Debug)]
pub enum Next<T> {
    /// Run these requests together now.
    Batch(Vec<Entry<T>>),
    /// Nothing to send before this instant (a delay to wait out or a deadline).
    WaitUntil(Instant),
    /// The queue is empty.
    Idle,
}

/// A push refused because the queue is full; the entry comes back.
#[derive(Debug)]
pub struct QueueFull<T>(pub Entry<T>);

/// The queues of one model.
#[derive(Debug)]
pub struct BatcherState<T> {
    config: BatchConfig,
    queues: Vec<VecDeque<Entry<T>>>,
    len: usize,
}

impl<T> BatcherState<T> {
    /// Empty queues for `config`.
    pub fn new(config: BatchConfig) -> Self {
        let levels = config.priority_levels.max(1) as usize;
        BatcherState {
            config,
            queues: (0..levels).map(|_| VecDeque::new()).collect(),
            len: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BatchConfig {
        &self.config
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues a request, or gives it back at once if the queue is full.
    pub fn push(&mut self, entry: Entry<T>) -> Result<(), QueueFull<T>> {
        if self.config.max_queue_size.is_some_and(|max| self.len >= max) {
            return Err(QueueFull(entry));
        }
        let level = entry.level.min(self.queues.len() - 1);
        self.queues[level].push_back(entry);
        self.len += 1;
        Ok(())
    }

    /// Removes and returns every request whose deadline is at or before `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<Entry<T>> {
        let mut expired = vec![];
        for queue in &mut self.queues {
            let mut kept = VecDeque::with_capacity(queue.len());
            for e in queue.drain(..) {
                if e.deadline.is_some_and(|d| d <= now) {
                    expired.push(e);
                } else {
                    kept.push_back(e);
                }
            }
            *queue = kept;
        }
        self.len -= expired.len();
        expired
    }

    /// Decides what to do at `now`. Call [`BatcherState::expire`] first so that
    /// expired requests are answered rather than run.
    pub fn next_batch(&mut self, now: Instant) -> Next<T> {
        if self.len == 0 {
            return Next::Idle;
        }
        let max_rows = self.config.max_batch_size.max(1);
        // Walk in service order, choosing the entries that join the first one's batch.
        let mut chosen: Vec<(usize, usize)> = vec![];
        let mut rows = 0;
        let mut full = false;
        let mut preferred_cut = None;
        let mut oldest = now;
        let mut group = None;
        'walk: for (level, queue) in self.queues.iter().enumerate() {
            for (index, e) in queue.iter().enumerate() {
                if *group.get_or_insert(e.group) != e.group {
                    continue;
                }
                if !chosen.is_empty() && rows + e.rows > max_rows {
                    full = true;
                    break 'walk;
                }
                chosen.push((level, index));
                rows += e.rows;
                oldest = oldest.min(e.arrival);
                if self.config.preferred_batch_sizes.contains(&rows) {
                    preferred_cut = Some(chosen.len());
                }
                if rows >= max_rows || !self.config.batching() {
                    full = true;
                    break 'walk;
                }
            }
        }
        let waited_enough = now.saturating_duration_since(oldest) >= self.config.max_queue_delay;
        let take = if full || waited_enough {
            Some(chosen.len())
        } else {
            // The largest preferred size that can be formed goes now.
            preferred_cut
        };
        match take {
            Some(n) => {
                chosen.truncate(n);
                Next::Batch(self.take(chosen))
            }
            None => {
                let flush_at = oldest + self.config.max_queue_delay;
                let first_deadline = self
                    .queues
                    .iter()
                    .flat_map(|q| q.iter())
                    .filter_map(|e| e.deadline)
                    .min();
                Next::WaitUntil(first_deadline.map_or(flush_at, |d| d.min(flush_at)))
            }
        }
    }

    /// The earliest deadline among waiting requests.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.queues
            .iter()
            .flat_map(|q| q.iter())
            .filter_map(|e| e.deadline)
            .min()
    }

    /// Removes the chosen `(level, index)` entries, keeping their order.
    fn take(&mut self, chosen: Vec<(usize, usize)>) -> Vec<Entry<T>> {
        let mut taken: Vec<Option<Entry<T>>> = (0..chosen.len()).map(|_| None).collect();
        // Remove from the back so earlier indices stay valid.
        for (slot, &(level, index)) in chosen.iter().enumerate().rev() {
            taken[slot] = self.queues[level].remove(index);
        }
        self.len -= chosen.len();
        taken.into_iter().map(|e| e.expect("chosen entries exist")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> BatchConfig {
        BatchConfig {
            max_batch_size: 8,
            max_queue_delay: Duration::from_millis(10),
            preferred_batch_sizes: vec![],
            priority_levels: 2,
            default_priority_level: 2,
            max_queue_size: Some(5),
            default_timeout: None,
        }
    }

    fn entry(id: u32, rows: usize, level: usize, at: Instant) -> Entry<u32> {
        Entry {
            rows,
            level,
            arrival: at,
            deadline: None,
            group: 0,
            payload: id,
        }
    }

    fn ids(next: Next<u32>) -> Vec<u32> {
        match next {
            Next::Batch(b) => b.into_iter().map(|e| e.payload).collect(),
            other => panic!("expected a batch, got {other:?}"),
        }
    }

    #[test]
    fn waits_for_the_delay_then_sends_what_it_has() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(config());
        s.push(entry(1, 1, 0, t0)).unwrap();
        s.push(entry(2, 2, 0, t0 + Duration::from_millis(3))).unwrap();
        match s.next_batch(t0 + Duration::from_millis(5)) {
            Next::WaitUntil(at) => assert_eq!(at, t0 + Duration::from_millis(10)),
            other => panic!("{other:?}"),
        }
        assert_eq!(ids(s.next_batch(t0 + Duration::from_millis(10))), vec![1, 2]);
        assert!(matches!(s.next_batch(t0), Next::Idle));
    }

    #[test]
    fn a_full_batch_goes_at_once_and_requests_are_never_split() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(config());
        s.push(entry(1, 5, 0, t0)).unwrap();
        s.push(entry(2, 3, 0, t0)).unwrap();
        s.push(entry(3, 4, 0, t0)).unwrap();
        assert_eq!(ids(s.next_batch(t0)), vec![1, 2]);
        // 4 rows left, not full, delay not passed: wait.
        assert!(matches!(s.next_batch(t0), Next::WaitUntil(_)));
        s.push(entry(4, 5, 0, t0)).unwrap();
        // 4 + 5 > 8: the batch is as full as it can get.
        assert_eq!(ids(s.next_batch(t0)), vec![3]);
    }

    #[test]
    fn preferred_sizes_go_without_waiting() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(BatchConfig {
            preferred_batch_sizes: vec![2, 4],
            ..config()
        });
        for id in 1..=3 {
            s.push(entry(id, 1, 0, t0)).unwrap();
        }
        assert_eq!(ids(s.next_batch(t0)), vec![1, 2]);
        assert!(matches!(s.next_batch(t0), Next::WaitUntil(_)));
    }

    #[test]
    fn higher_priority_is_served_first() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(BatchConfig {
            max_batch_size: 2,
            ..config()
        });
        let cfg = s.config().clone();
        s.push(entry(1, 1, cfg.level_of(0), t0)).unwrap(); // default = level 2
        s.push(entry(2, 1, cfg.level_of(2), t0)).unwrap();
        s.push(entry(3, 1, cfg.level_of(1), t0)).unwrap();
        assert_eq!(ids(s.next_batch(t0)), vec![3, 1]);
        assert_eq!(cfg.level_of(99), 1, "beyond the levels means lowest priority");
    }

    #[test]
    fn expired_requests_leave_before_execution() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(config());
        let mut e = entry(1, 1, 0, t0);
        e.deadline = Some(t0 + Duration::from_millis(2));
        s.push(e).unwrap();
        s.push(entry(2, 1, 0, t0)).unwrap();
        match s.next_batch(t0) {
            Next::WaitUntil(at) => assert_eq!(at, t0 + Duration::from_millis(2), "wake for the deadline"),
            other => panic!("{other:?}"),
        }
        let expired = s.expire(t0 + Duration::from_millis(2));
        assert_eq!(expired.iter().map(|e| e.payload).collect::<Vec<_>>(), vec![1]);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn a_full_queue_refuses_at_once() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(config());
        for id in 0..5 {
            s.push(entry(id, 1, 0, t0)).unwrap();
        }
        let QueueFull(back) = s.push(entry(9, 1, 0, t0)).unwrap_err();
        assert_eq!(back.payload, 9);
    }

    #[test]
    fn only_requests_of_one_group_share_a_batch() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(config());
        let mut odd = entry(2, 1, 0, t0);
        odd.group = 7;
        s.push(entry(1, 1, 0, t0)).unwrap();
        s.push(odd).unwrap();
        s.push(entry(3, 1, 0, t0)).unwrap();
        let later = t0 + Duration::from_millis(10);
        assert_eq!(ids(s.next_batch(later)), vec![1, 3]);
        assert_eq!(ids(s.next_batch(later)), vec![2]);
    }

    #[test]
    fn batches_never_exceed_the_budget_and_lose_nothing() {
        // A deterministic random walk over pushes and decisions.
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let t0 = Instant::now();
        let mut s = BatcherState::new(BatchConfig {
            max_queue_size: None,
            preferred_batch_sizes: vec![4],
            ..config()
        });
        let (mut pushed, mut sent) = (0u32, 0usize);
        for step in 0..2000u64 {
            let now = t0 + Duration::from_micros(step * 700);
            if rand(3) > 0 {
                let mut e = entry(pushed, 1 + rand(8) as usize, rand(2) as usize, now);
                e.group = rand(2);
                s.push(e).unwrap();
                pushed += 1;
            }
            if let Next::Batch(b) = s.next_batch(now) {
                assert!(!b.is_empty());
                let rows: usize = b.iter().map(|e| e.rows).sum();
                assert!(rows <= 8 || b.len() == 1, "batch of {rows} rows");
                assert!(b.iter().all(|e| e.group == b[0].group));
                sent += b.len();
            }
        }
        let end = t0 + Duration::from_secs(3600);
        while let Next::Batch(b) = s.next_batch(end) {
            sent += b.len();
        }
        assert_eq!(sent, pushed as usize);
        assert!(s.is_empty());
    }

    #[test]
    fn without_batching_requests_go_one_by_one() {
        let t0 = Instant::now();
        let mut s = BatcherState::new(BatchConfig {
            max_batch_size: 1,
            ..config()
        });
        s.push(entry(1, 1, 0, t0)).unwrap();
        s.push(entry(2, 1, 0, t0)).unwrap();
        assert_eq!(ids(s.next_batch(t0)), vec![1]);
        assert_eq!(ids(s.next_batch(t0)), vec![2]);
    }
}
