// rgpud's config file (TOML): tenants, TLS and limits. config/rgpud.example.toml documents
// every key. Command-line flags given explicitly override the file.
#pragma once

#include <memory>
#include <string>

#include "proto/status.h"

namespace rgpu::server {

struct ServerOptions;

// Reads `path` into `opt` (tenants, TLS files, listen/metrics addresses, limits).
// Unknown keys are errors, so that a typo does not silently drop a limit.
Status LoadConfig(const std::string& path, ServerOptions* opt);

// Parses "4GiB", "512 MiB", "1000000" into bytes.
Result<uint64_t> ParseBytes(const std::string& text);

}  // namespace rgpu::server
