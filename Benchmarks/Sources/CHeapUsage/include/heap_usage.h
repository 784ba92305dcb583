#ifndef HEAP_USAGE_H
#define HEAP_USAGE_H

#include <stddef.h>

/// Bytes handed out by malloc and not yet freed (glibc's mallinfo2().uordblks), or 0 where
/// the C library does not tell.
size_t heap_usage_in_use(void);

/// Bytes in chunks that malloc got from mmap (large allocations; glibc's mallinfo2().hblkhd),
/// which heap_usage_in_use does not count, or 0 where the C library does not tell.
size_t heap_usage_mapped(void);

#endif
