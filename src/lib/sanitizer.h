/* Which sanitizer this build runs under, asked one way: gcc defines
 * __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang answers __has_feature.
 * Code that must behave differently under a sanitizer (thread stacks, the
 * bump allocator's red zones, frees before exit) asks these two. */
#ifndef GPUGATE_SANITIZER_H
#define GPUGATE_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define BUILD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILD_ASAN 1
#endif
#endif
#ifndef BUILD_ASAN
#define BUILD_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define BUILD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BUILD_TSAN 1
#endif
#endif
#ifndef BUILD_TSAN
#define BUILD_TSAN 0
#endif

#endif
