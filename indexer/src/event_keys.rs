//! Maps and sets keyed by event keys ([`crate::fts::event_key`]).
//!
//! An event key is the first 64 bits of the event's content hash: already
//! uniform, so it serves as its own hash. The standard SipHash cost more
//! than the lookups it served — a fifth of a prompt hook spent hashing the
//! vector index's keys to find the rows of a few wanted ones.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map keyed by event keys.
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;
/// A hash set of event keys.
pub type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// Passes a `u64` through as its hash (other input is folded in, so the
/// hasher stays correct for any key type, if not fast).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_maps_of_keys_work_as_with_the_standard_hasher() {
        let keys: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let set: KeySet = keys.iter().copied().step_by(2).collect();
        let map: KeyMap<usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(set.contains(k), i % 2 == 0);
            assert_eq!(map.get(k), Some(&i));
        }
        // small keys (not hashes) still land in distinct buckets
        let small: KeySet = (0..1000u64).collect();
        assert_eq!(small.len(), 1000);
    }
}
