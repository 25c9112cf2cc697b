// Heap accounting for the fuzz targets' 64 MB-per-input invariant. libFuzzer's own
// -malloc_limit_mb catches one oversized allocation; these hooks also catch many small ones
// that together exceed the budget. The definitions of LLVMFuzzerRunDriver and the
// __sanitizer_* functions come from the sanitizer runtimes (`-sanitize=fuzzer,address`).
#include "CLibFuzzer.h"

#include <stdatomic.h>

int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *, size_t),
    void (*free_hook)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static _Atomic long long live_bytes = 0;
static _Atomic long long peak_bytes = 0;
static _Atomic long long start_bytes = 0;

static void on_malloc(const volatile void *pointer, size_t size) {
    (void)pointer;
    long long now = atomic_fetch_add_explicit(&live_bytes, (long long)size, memory_order_relaxed) + (long long)size;
    long long peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&peak_bytes, &peak, now, memory_order_relaxed, memory_order_relaxed)) {
    }
}

static void on_free(const volatile void *pointer) {
    if (pointer == 0) return;
    atomic_fetch_sub_explicit(&live_bytes, (long long)__sanitizer_get_allocated_size(pointer), memory_order_relaxed);
}

int storegate_fuzz_install_memory_hooks(void) {
    return __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}

void storegate_fuzz_memory_begin(void) {
    long long now = atomic_load_explicit(&live_bytes, memory_order_relaxed);
    atomic_store_explicit(&start_bytes, now, memory_order_relaxed);
    atomic_store_explicit(&peak_bytes, now, memory_order_relaxed);
}

long long storegate_fuzz_memory_peak_growth(void) {
    return atomic_load_explicit(&peak_bytes, memory_order_relaxed) - atomic_load_explicit(&start_bytes, memory_order_relaxed);
}
