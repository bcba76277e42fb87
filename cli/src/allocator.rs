//! The process's allocator, chosen by the command it runs.
//!
//! A hook, `record` or `search` lives for a few milliseconds and allocates
//! little: the system allocator serves it from the heap it already has,
//! while mimalloc would first set up its arena and segment map (about a
//! hundred page faults, a tenth of a hook). Indexing allocates from several
//! threads at once, where glibc's allocator spent a fifth of a rebuild on
//! its locks: the commands that process the whole log switch to mimalloc
//! ([`use_bulk_allocator`]) before they start.
//!
//! A block is resized and freed by the allocator that made it: after the
//! switch, a block the system allocator made earlier is recognised by not
//! lying in mimalloc's heap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use mimalloc::MiMalloc;

/// The system allocator until [`use_bulk_allocator`], then mimalloc.
pub struct Allocator;

static BULK: AtomicBool = AtomicBool::new(false);

/// Makes mimalloc serve every later allocation. Called once, by the main
/// thread, before a bulk command starts its threads.
pub fn use_bulk_allocator() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    // SAFETY: mimalloc's own process set-up, which its constructor would
    // have run at load; called once, before mimalloc serves anything.
    STARTED.call_once(|| unsafe { _mi_auto_process_init() });
    BULK.store(true, Ordering::Release);
}

unsafe extern "C" {
    /// What mimalloc runs at load from a constructor (options, the main
    /// heap, thread clean-up): built without it (`MI_PRIM_HAS_PROCESS_ATTACH`,
    /// `.cargo/config.toml`), a process that never switches does not pay
    /// for it; elsewhere the constructor has run and this repeats nothing.
    fn _mi_auto_process_init();
}

/// Whether `ptr` was made by mimalloc (only possible after the switch).
fn from_mimalloc(ptr: *mut u8) -> bool {
    BULK.load(Ordering::Acquire)
        // SAFETY: a lookup in mimalloc's segment map; any address is fine.
        && unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast()) }
}

// SAFETY: every block goes back to (and is resized by) the allocator that
// made it, and both allocators honour `Layout`.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if BULK.load(Ordering::Acquire) {
            unsafe { MiMalloc.alloc(layout) }
        } else {
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if BULK.load(Ordering::Acquire) {
            unsafe { MiMalloc.alloc_zeroed(layout) }
        } else {
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if from_mimalloc(ptr) {
            unsafe { MiMalloc.dealloc(ptr, layout) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if from_mimalloc(ptr) {
            unsafe { MiMalloc.realloc(ptr, layout, new_size) }
        } else {
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_made_before_the_switch_are_freed_and_grown_after_it() {
        let before: Vec<u64> = (0..1000).collect();
        let mut grown = vec![1u8; 10];
        use_bulk_allocator();
        let after: Vec<u64> = (0..1000).collect();
        grown.extend(std::iter::repeat_n(2u8, 100_000));
        assert_eq!(before, after);
        assert_eq!(grown.len(), 100_010);
        drop(before);
        drop(grown);
    }
}
