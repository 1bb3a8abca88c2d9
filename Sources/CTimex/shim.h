#include <sys/timex.h>

// Whether the kernel's clock is synchronised: adjtimex with no change (any user may ask).
// 1 synchronised, 0 not (TIME_ERROR or STA_UNSYNC: what timedatectl's NTPSynchronized
// reads), -1 the call failed.
static inline int fg_clock_synchronized(void) {
    struct timex t = {0};
    int state = adjtimex(&t);
    if (state < 0) return -1;
    return state != TIME_ERROR && !(t.status & STA_UNSYNC);
}
