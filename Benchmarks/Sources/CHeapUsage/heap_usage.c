#include "heap_usage.h"

#if defined(__linux__)
#include <features.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

size_t heap_usage_in_use(void) {
    return mallinfo2().uordblks;
}

size_t heap_usage_mapped(void) {
    return mallinfo2().hblkhd;
}
#else
size_t heap_usage_in_use(void) {
    return 0;
}

size_t heap_usage_mapped(void) {
    return 0;
}
#endif
