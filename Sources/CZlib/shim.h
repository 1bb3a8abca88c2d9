#include <zlib.h>

// deflateInit2 and inflateInit2 are macros over the _ functions, which Swift cannot call:
// the same calls as inline functions.
static inline int fg_deflate_init_gzip(z_stream *s, int level) {
    // 15 + 16: a 32 KiB window with a gzip header and trailer, as gzip(1) writes.
    return deflateInit2(s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
static inline int fg_inflate_init_gzip(z_stream *s) {
    return inflateInit2(s, 15 + 16);
}
