/* libFuzzer target: STL files (ASCII and binary) through loom_mesh_load (make fuzz). */
#include "fuzz_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_mesh_file(data, size, "stl"); }
