#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

// libgpiod is opened with dlopen at run time, never linked, so one build serves both C APIs:
// libgpiod 2.x (libgpiod.so.3: Debian 13 / Raspberry Pi OS trixie, bookworm-backports) and
// libgpiod 1.6 (libgpiod.so.2: Debian 12 / Raspberry Pi OS bookworm). No header of either
// -dev package is needed: the declarations below are copied from their gpiod.h (1.6.3 and
// 2.1.3), types kept opaque wherever the library owns the object. Swift calls through the
// tables that fg_gpiod1_load / fg_gpiod2_load return, never gpiod_* directly.

// ---------------------------------------------------------------- libgpiod 1.6 (v1 API) ---
struct gpiod_chip;
struct gpiod_line;

// struct gpiod_line_event of gpiod.h 1.6: filled by the caller's buffer, so its layout matters.
struct fg_gpiod1_line_event {
    struct timespec ts;
    int event_type;
};

static const int FG_GPIOD1_FLAG_OPEN_DRAIN = 1 << 0;
static const int FG_GPIOD1_FLAG_OPEN_SOURCE = 1 << 1;
static const int FG_GPIOD1_FLAG_ACTIVE_LOW = 1 << 2;
static const int FG_GPIOD1_FLAG_BIAS_DISABLE = 1 << 3;
static const int FG_GPIOD1_FLAG_BIAS_PULL_DOWN = 1 << 4;
static const int FG_GPIOD1_FLAG_BIAS_PULL_UP = 1 << 5;
static const int FG_GPIOD1_EVENT_RISING_EDGE = 1;
static const int FG_GPIOD1_EVENT_FALLING_EDGE = 2;

struct fg_gpiod1_api {
    const char *soname;
    const char *(* _Nonnull version_string)(void);
    struct gpiod_chip *(* _Nonnull chip_open_lookup)(const char *descr);
    void (* _Nonnull chip_close)(struct gpiod_chip *chip);
    const char *(* _Nonnull chip_name)(struct gpiod_chip *chip);
    const char *(* _Nonnull chip_label)(struct gpiod_chip *chip);
    unsigned int (* _Nonnull chip_num_lines)(struct gpiod_chip *chip);
    struct gpiod_line *(* _Nonnull chip_get_line)(struct gpiod_chip *chip, unsigned int offset);
    struct gpiod_line *(* _Nonnull chip_find_line)(struct gpiod_chip *chip, const char *name);
    unsigned int (* _Nonnull line_offset)(struct gpiod_line *line);
    const char *(* _Nonnull line_name)(struct gpiod_line *line);
    const char *(* _Nonnull line_consumer)(struct gpiod_line *line);
    int (* _Nonnull line_update)(struct gpiod_line *line);
    int (* _Nonnull line_request_output_flags)(struct gpiod_line *line, const char *consumer, int flags, int default_val);
    int (* _Nonnull line_request_both_edges_events_flags)(struct gpiod_line *line, const char *consumer, int flags);
    void (* _Nonnull line_release)(struct gpiod_line *line);
    int (* _Nonnull line_get_value)(struct gpiod_line *line);
    int (* _Nonnull line_set_value)(struct gpiod_line *line, int value);
    int (* _Nonnull line_event_get_fd)(struct gpiod_line *line);
    int (* _Nonnull line_event_read_multiple)(struct gpiod_line *line, struct fg_gpiod1_line_event *events, unsigned int num_events);
};

// ---------------------------------------------------------------- libgpiod 2.x (v2 API) ---
struct gpiod_chip_info;
struct gpiod_line_info;
struct gpiod_line_settings;
struct gpiod_line_config;
struct gpiod_request_config;
struct gpiod_line_request;
struct gpiod_edge_event;
struct gpiod_edge_event_buffer;

// The enums of gpiod.h 2.x as plain ints (their values are part of the ABI).
static const int FG_GPIOD2_VALUE_INACTIVE = 0;
static const int FG_GPIOD2_VALUE_ACTIVE = 1;
static const int FG_GPIOD2_DIRECTION_AS_IS = 1;
static const int FG_GPIOD2_DIRECTION_INPUT = 2;
static const int FG_GPIOD2_DIRECTION_OUTPUT = 3;
static const int FG_GPIOD2_EDGE_NONE = 1;
static const int FG_GPIOD2_EDGE_RISING = 2;
static const int FG_GPIOD2_EDGE_FALLING = 3;
static const int FG_GPIOD2_EDGE_BOTH = 4;
static const int FG_GPIOD2_BIAS_AS_IS = 1;
static const int FG_GPIOD2_BIAS_UNKNOWN = 2;
static const int FG_GPIOD2_BIAS_DISABLED = 3;
static const int FG_GPIOD2_BIAS_PULL_UP = 4;
static const int FG_GPIOD2_BIAS_PULL_DOWN = 5;
static const int FG_GPIOD2_EDGE_EVENT_RISING_EDGE = 1;
static const int FG_GPIOD2_EDGE_EVENT_FALLING_EDGE = 2;

struct fg_gpiod2_api {
    const char *soname;
    const char *(* _Nonnull api_version)(void);
    bool (* _Nonnull is_gpiochip_device)(const char *path);
    struct gpiod_chip *(* _Nonnull chip_open)(const char *path);
    void (* _Nonnull chip_close)(struct gpiod_chip *chip);
    struct gpiod_chip_info *(* _Nonnull chip_get_info)(struct gpiod_chip *chip);
    void (* _Nonnull chip_info_free)(struct gpiod_chip_info *info);
    const char *(* _Nonnull chip_info_get_name)(struct gpiod_chip_info *info);
    const char *(* _Nonnull chip_info_get_label)(struct gpiod_chip_info *info);
    size_t (* _Nonnull chip_info_get_num_lines)(struct gpiod_chip_info *info);
    struct gpiod_line_info *(* _Nonnull chip_get_line_info)(struct gpiod_chip *chip, unsigned int offset);
    int (* _Nonnull chip_get_line_offset_from_name)(struct gpiod_chip *chip, const char *name);
    void (* _Nonnull line_info_free)(struct gpiod_line_info *info);
    const char *(* _Nonnull line_info_get_name)(struct gpiod_line_info *info);
    bool (* _Nonnull line_info_is_used)(struct gpiod_line_info *info);
    const char *(* _Nonnull line_info_get_consumer)(struct gpiod_line_info *info);
    struct gpiod_line_settings *(* _Nonnull line_settings_new)(void);
    void (* _Nonnull line_settings_free)(struct gpiod_line_settings *settings);
    int (* _Nonnull line_settings_set_direction)(struct gpiod_line_settings *settings, int direction);
    int (* _Nonnull line_settings_set_edge_detection)(struct gpiod_line_settings *settings, int edge);
    int (* _Nonnull line_settings_set_bias)(struct gpiod_line_settings *settings, int bias);
    void (* _Nonnull line_settings_set_active_low)(struct gpiod_line_settings *settings, bool active_low);
    void (* _Nonnull line_settings_set_debounce_period_us)(struct gpiod_line_settings *settings, unsigned long period);
    int (* _Nonnull line_settings_set_output_value)(struct gpiod_line_settings *settings, int value);
    struct gpiod_line_config *(* _Nonnull line_config_new)(void);
    void (* _Nonnull line_config_free)(struct gpiod_line_config *config);
    int (* _Nonnull line_config_add_line_settings)(struct gpiod_line_config *config, const unsigned int *offsets, size_t num_offsets,
                                         struct gpiod_line_settings *settings);
    struct gpiod_request_config *(* _Nonnull request_config_new)(void);
    void (* _Nonnull request_config_free)(struct gpiod_request_config *config);
    void (* _Nonnull request_config_set_consumer)(struct gpiod_request_config *config, const char *consumer);
    struct gpiod_line_request *(* _Nonnull chip_request_lines)(struct gpiod_chip *chip, struct gpiod_request_config *req_cfg,
                                                     struct gpiod_line_config *line_cfg);
    void (* _Nonnull line_request_release)(struct gpiod_line_request *request);
    int (* _Nonnull line_request_get_value)(struct gpiod_line_request *request, unsigned int offset);
    int (* _Nonnull line_request_set_value)(struct gpiod_line_request *request, unsigned int offset, int value);
    int (* _Nonnull line_request_get_fd)(struct gpiod_line_request *request);
    int (* _Nonnull line_request_read_edge_events)(struct gpiod_line_request *request, struct gpiod_edge_event_buffer *buffer,
                                         size_t max_events);
    struct gpiod_edge_event_buffer *(* _Nonnull edge_event_buffer_new)(size_t capacity);
    void (* _Nonnull edge_event_buffer_free)(struct gpiod_edge_event_buffer *buffer);
    struct gpiod_edge_event *(* _Nonnull edge_event_buffer_get_event)(struct gpiod_edge_event_buffer *buffer, unsigned long index);
    int (* _Nonnull edge_event_get_event_type)(struct gpiod_edge_event *event);
    uint64_t (* _Nonnull edge_event_get_timestamp_ns)(struct gpiod_edge_event *event);
    unsigned int (* _Nonnull edge_event_get_line_offset)(struct gpiod_edge_event *event);
};

#define FG_GPIOD_SYM(api, h, field, name, problem) \
    if (!(*(void **)&(api)->field = dlsym(h, name))) { *(problem) = name; goto missing; }

// Opens `soname` with dlopen and a zeroed table of `size` bytes for its symbols (*handle: the
// library); NULL with *problem: dlerror()'s text, or "out of memory".
static inline void *fg_gpiod_open(const char *soname, size_t size, void **handle, const char **problem, int *missing_symbol) {
    *missing_symbol = 0;
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) { *problem = dlerror(); return NULL; }
    void *api = calloc(1, size);
    if (!api) { *problem = "out of memory"; dlclose(h); return NULL; }
    *handle = h;
    return api;
}

// A symbol the table needs is missing: what fg_gpiod_open made is let go; NULL, *missing_symbol set.
static inline void *fg_gpiod_missing(void *api, void *handle, int *missing_symbol) {
    *missing_symbol = 1;
    free(api);
    dlclose(handle);
    return NULL;
}

// Opens libgpiod.so.2 and checks that it is the 1.x API: the table (kept for the life of the
// process), or NULL with *problem: dlerror()'s text, or the name of a missing symbol (then
// *missing_symbol is set).
static inline const struct fg_gpiod1_api *fg_gpiod1_load(const char *soname, const char **problem, int *missing_symbol) {
    void *h;
    struct fg_gpiod1_api *api = fg_gpiod_open(soname, sizeof *api, &h, problem, missing_symbol);
    if (!api) return NULL;
    api->soname = soname;
    FG_GPIOD_SYM(api, h, version_string, "gpiod_version_string", problem)
    FG_GPIOD_SYM(api, h, chip_open_lookup, "gpiod_chip_open_lookup", problem)
    FG_GPIOD_SYM(api, h, chip_close, "gpiod_chip_close", problem)
    FG_GPIOD_SYM(api, h, chip_name, "gpiod_chip_name", problem)
    FG_GPIOD_SYM(api, h, chip_label, "gpiod_chip_label", problem)
    FG_GPIOD_SYM(api, h, chip_num_lines, "gpiod_chip_num_lines", problem)
    FG_GPIOD_SYM(api, h, chip_get_line, "gpiod_chip_get_line", problem)
    FG_GPIOD_SYM(api, h, chip_find_line, "gpiod_chip_find_line", problem)
    FG_GPIOD_SYM(api, h, line_offset, "gpiod_line_offset", problem)
    FG_GPIOD_SYM(api, h, line_name, "gpiod_line_name", problem)
    FG_GPIOD_SYM(api, h, line_consumer, "gpiod_line_consumer", problem)
    FG_GPIOD_SYM(api, h, line_update, "gpiod_line_update", problem)
    FG_GPIOD_SYM(api, h, line_request_output_flags, "gpiod_line_request_output_flags", problem)
    FG_GPIOD_SYM(api, h, line_request_both_edges_events_flags, "gpiod_line_request_both_edges_events_flags", problem)
    FG_GPIOD_SYM(api, h, line_release, "gpiod_line_release", problem)
    FG_GPIOD_SYM(api, h, line_get_value, "gpiod_line_get_value", problem)
    FG_GPIOD_SYM(api, h, line_set_value, "gpiod_line_set_value", problem)
    FG_GPIOD_SYM(api, h, line_event_get_fd, "gpiod_line_event_get_fd", problem)
    FG_GPIOD_SYM(api, h, line_event_read_multiple, "gpiod_line_event_read_multiple", problem)
    return api;
missing:
    return fg_gpiod_missing(api, h, missing_symbol);
}

// Opens libgpiod.so.3 (or another 2.x soname) the same way.
static inline const struct fg_gpiod2_api *fg_gpiod2_load(const char *soname, const char **problem, int *missing_symbol) {
    void *h;
    struct fg_gpiod2_api *api = fg_gpiod_open(soname, sizeof *api, &h, problem, missing_symbol);
    if (!api) return NULL;
    api->soname = soname;
    // gpiod_api_version since 2.0; 2.1 still exports the old name too.
    if (!(*(void **)&api->api_version = dlsym(h, "gpiod_api_version"))) {
        FG_GPIOD_SYM(api, h, api_version, "gpiod_version_string", problem)
    }
    FG_GPIOD_SYM(api, h, is_gpiochip_device, "gpiod_is_gpiochip_device", problem)
    FG_GPIOD_SYM(api, h, chip_open, "gpiod_chip_open", problem)
    FG_GPIOD_SYM(api, h, chip_close, "gpiod_chip_close", problem)
    FG_GPIOD_SYM(api, h, chip_get_info, "gpiod_chip_get_info", problem)
    FG_GPIOD_SYM(api, h, chip_info_free, "gpiod_chip_info_free", problem)
    FG_GPIOD_SYM(api, h, chip_info_get_name, "gpiod_chip_info_get_name", problem)
    FG_GPIOD_SYM(api, h, chip_info_get_label, "gpiod_chip_info_get_label", problem)
    FG_GPIOD_SYM(api, h, chip_info_get_num_lines, "gpiod_chip_info_get_num_lines", problem)
    FG_GPIOD_SYM(api, h, chip_get_line_info, "gpiod_chip_get_line_info", problem)
    FG_GPIOD_SYM(api, h, chip_get_line_offset_from_name, "gpiod_chip_get_line_offset_from_name", problem)
    FG_GPIOD_SYM(api, h, line_info_free, "gpiod_line_info_free", problem)
    FG_GPIOD_SYM(api, h, line_info_get_name, "gpiod_line_info_get_name", problem)
    FG_GPIOD_SYM(api, h, line_info_is_used, "gpiod_line_info_is_used", problem)
    FG_GPIOD_SYM(api, h, line_info_get_consumer, "gpiod_line_info_get_consumer", problem)
    FG_GPIOD_SYM(api, h, line_settings_new, "gpiod_line_settings_new", problem)
    FG_GPIOD_SYM(api, h, line_settings_free, "gpiod_line_settings_free", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_direction, "gpiod_line_settings_set_direction", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_edge_detection, "gpiod_line_settings_set_edge_detection", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_bias, "gpiod_line_settings_set_bias", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_active_low, "gpiod_line_settings_set_active_low", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_debounce_period_us, "gpiod_line_settings_set_debounce_period_us", problem)
    FG_GPIOD_SYM(api, h, line_settings_set_output_value, "gpiod_line_settings_set_output_value", problem)
    FG_GPIOD_SYM(api, h, line_config_new, "gpiod_line_config_new", problem)
    FG_GPIOD_SYM(api, h, line_config_free, "gpiod_line_config_free", problem)
    FG_GPIOD_SYM(api, h, line_config_add_line_settings, "gpiod_line_config_add_line_settings", problem)
    FG_GPIOD_SYM(api, h, request_config_new, "gpiod_request_config_new", problem)
    FG_GPIOD_SYM(api, h, request_config_free, "gpiod_request_config_free", problem)
    FG_GPIOD_SYM(api, h, request_config_set_consumer, "gpiod_request_config_set_consumer", problem)
    FG_GPIOD_SYM(api, h, chip_request_lines, "gpiod_chip_request_lines", problem)
    FG_GPIOD_SYM(api, h, line_request_release, "gpiod_line_request_release", problem)
    FG_GPIOD_SYM(api, h, line_request_get_value, "gpiod_line_request_get_value", problem)
    FG_GPIOD_SYM(api, h, line_request_set_value, "gpiod_line_request_set_value", problem)
    FG_GPIOD_SYM(api, h, line_request_get_fd, "gpiod_line_request_get_fd", problem)
    FG_GPIOD_SYM(api, h, line_request_read_edge_events, "gpiod_line_request_read_edge_events", problem)
    FG_GPIOD_SYM(api, h, edge_event_buffer_new, "gpiod_edge_event_buffer_new", problem)
    FG_GPIOD_SYM(api, h, edge_event_buffer_free, "gpiod_edge_event_buffer_free", problem)
    FG_GPIOD_SYM(api, h, edge_event_buffer_get_event, "gpiod_edge_event_buffer_get_event", problem)
    FG_GPIOD_SYM(api, h, edge_event_get_event_type, "gpiod_edge_event_get_event_type", problem)
    FG_GPIOD_SYM(api, h, edge_event_get_timestamp_ns, "gpiod_edge_event_get_timestamp_ns", problem)
    FG_GPIOD_SYM(api, h, edge_event_get_line_offset, "gpiod_edge_event_get_line_offset", problem)
    return api;
missing:
    return fg_gpiod_missing(api, h, missing_symbol);
}

#undef FG_GPIOD_SYM
