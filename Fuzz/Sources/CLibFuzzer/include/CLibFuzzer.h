#ifndef STOREGATE_CLIBFUZZER_H
#define STOREGATE_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, linked by `-sanitize=fuzzer`. StoreGate's fuzz targets have their
/// own `main` (SwiftPM renames an executable's entry point and points `main` at it, which
/// replaces libFuzzer's), and hand their callback to libFuzzer through this function.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

/// Installs AddressSanitizer malloc/free hooks that keep the live heap size and its peak.
/// Returns 0 when the hooks could not be installed (no sanitizer runtime).
int storegate_fuzz_install_memory_hooks(void);

/// Starts measuring an input: the peak is reset to the current live heap size.
void storegate_fuzz_memory_begin(void);

/// The highest live heap size since `storegate_fuzz_memory_begin`, minus the size then.
long long storegate_fuzz_memory_peak_growth(void);

#endif
