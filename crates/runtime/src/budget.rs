//! Partitioning CPU threads between workers.

use crate::{Error, Result};

/// The CPU threads hinfer may keep busy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadBudget {
    /// Threads available in all (cores, or a user-set limit).
    pub cores: usize,
}

impl ThreadBudget {
    /// The machine's available parallelism (respects cgroup and affinity limits).
    pub fn detect() -> ThreadBudget {
        ThreadBudget {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// Intra-op threads for each of `workers` workers.
    ///
    /// With `threads_per_worker` unset, the cores are shared evenly (at least one
    /// each). An explicit value is honoured only if `workers × threads` fits in the
    /// budget, or `allow_oversubscribe` is set.
    pub fn per_worker(
        &self,
        workers: usize,
        threads_per_worker: Option<usize>,
        allow_oversubscribe: bool,
    ) -> Result<usize> {
        let workers = workers.max(1);
        let threads = threads_per_worker
            .unwrap_or_else(|| (self.cores / workers).max(1))
            .max(1);
        if workers * threads > self.cores && !allow_oversubscribe {
            return Err(Error::Oversubscribed {
                workers,
                threads,
                cores: self.cores,
            });
        }
        Ok(threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cores_evenly_and_refuses_oversubscription() {
        let budget = ThreadBudget { cores: 8 };
        assert_eq!(budget.per_worker(1, None, false).unwrap(), 8);
        assert_eq!(budget.per_worker(3, None, false).unwrap(), 2);
        assert_eq!(budget.per_worker(2, Some(4), false).unwrap(), 4);
        let err = budget.per_worker(3, Some(4), false).unwrap_err();
        assert!(err.to_string().contains("12 busy threads"), "{err}");
        assert_eq!(budget.per_worker(3, Some(4), true).unwrap(), 4);
    }

    #[test]
    fn more_workers_than_cores_needs_permission() {
        let budget = ThreadBudget { cores: 2 };
        assert!(budget.per_worker(3, None, false).is_err());
        assert_eq!(budget.per_worker(3, None, true).unwrap(), 1);
    }
}

/// A machine-wide limit on busy threads, shared by every worker pool.
///
/// Each run takes as many tokens as its worker has intra-op threads and gives them
/// back when it ends, so that however many models and workers are loaded, no more
/// threads compute at once than the budget allows.
#[derive(Debug)]
pub struct CpuGate {
    capacity: usize,
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl CpuGate {
    /// A gate of `capacity` tokens (at least 1).
    pub fn new(capacity: usize) -> CpuGate {
        let capacity = capacity.max(1);
        CpuGate {
            capacity,
            free: std::sync::Mutex::new(capacity),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Tokens in all.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Blocks until `n` tokens (capped at the capacity) are free and takes them.
    pub fn acquire(&self, n: usize) -> CpuPermit<'_> {
        let n = n.clamp(1, self.capacity);
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free < n {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= n;
        CpuPermit { gate: self, n }
    }
}

/// Tokens held for one run; released on drop.
#[derive(Debug)]
pub struct CpuPermit<'a> {
    gate: &'a CpuGate,
    n: usize,
}

impl Drop for CpuPermit<'_> {
    fn drop(&mut self) {
        let mut free = self.gate.free.lock().unwrap_or_else(|e| e.into_inner());
        *free += self.n;
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod gate_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn never_more_busy_than_capacity() {
        let gate = Arc::new(CpuGate::new(3));
        let busy = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            for i in 0..6 {
                let (gate, busy, peak) = (gate.clone(), busy.clone(), peak.clone());
                s.spawn(move || {
                    for _ in 0..50 {
                        let n = 1 + i % 2;
                        let _permit = gate.acquire(n);
                        let now = busy.fetch_add(n, Ordering::SeqCst) + n;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        busy.fetch_sub(n, Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert_eq!(gate.acquire(10).n, 3, "requests above capacity are capped");
    }
}
