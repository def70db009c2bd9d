// strata load URI [...]: the model loader's command line (docs/model-loading.md).
// The loader is Python (client/python/strata/loader.py, over botocore and
// torch, as the engines that consume the weights are); this runs it with
// Debian's python3, finding the package beside the binary.
#pragma once

#include <string>
#include <vector>

namespace strata::server {

// Replaces the process with `python3 -m strata.loader ARGS`; returns (1)
// only if that cannot be done, having said why.
int RunLoad(const std::vector<std::string>& args);

}  // namespace strata::server
