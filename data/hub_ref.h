// A Hugging Face cache ref file (REPO/refs/main, refs/<tag>): one commit hash, read bounded.
#pragma once
#include <string>

namespace foxeval {

// Its first line, trimmed; "" when there is no such file. A file over 1 KiB, a FIFO or a device is
// refused (Error naming it) without reading it or waiting on it.
std::string read_hub_ref(const std::string& ref_path);

}  // namespace foxeval
