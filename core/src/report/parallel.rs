//! Work spread over the machine's cores, for merging reports: reading the hosts' files and
//! adding their timeline rows (16 one-hour reports hold 57,600 rows to add).

/// `f` of each item, in order, computed over as many threads as the machine has cores, each
/// given at least `min_per_thread` items (so small inputs stay on the calling thread). A
/// thread the system refuses leaves its share to the calling thread.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    min_per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items.len() / min_per_thread.max(1)).max(1);
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let shares: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|share| {
                let spawned = std::thread::Builder::new()
                    .name("respload-merge".into())
                    .spawn_scoped(scope, move || share.iter().map(f).collect::<Vec<R>>());
                (share, spawned.ok())
            })
            .collect();
        shares
            .into_iter()
            .flat_map(|(share, handle)| match handle {
                Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => share.iter().map(f).collect(),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_keeps_the_order_of_the_items_however_they_are_shared() {
        for n in [0, 1, 2, 3, 7, 64, 1000] {
            let items: Vec<u64> = (0..n).collect();
            for min in [0, 1, 5, 100] {
                let got = super::map(&items, min, |x| x * 3 + 1);
                let want: Vec<u64> = items.iter().map(|x| x * 3 + 1).collect();
                assert_eq!(got, want, "{n} items, at least {min} a thread");
            }
        }
    }
}
