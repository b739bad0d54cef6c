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
