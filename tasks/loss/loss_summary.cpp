#include "tasks/loss/loss_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace foxeval::loss {

void print_loss_summary(const nlohmann::json& r) {
  // Loss, then perplexity, each by length in numeric order (the JSON object's order is the keys'
  // text order: 1024, 2048, 512).
  for (const std::string prefix : {"val/loss_avg_len_", "val/perplexity_len_"}) {
    std::vector<std::pair<int64_t, std::string>> keys;
    for (auto it = r.begin(); it != r.end(); ++it)
      if (it.key().rfind(prefix, 0) == 0) keys.emplace_back(std::atoll(it.key().c_str() + prefix.size()), it.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& [length, key] : keys) std::printf("%s\t%.6f\n", key.c_str(), r[key].get<double>());
  }
  if (r.contains("peak_gpu_memory_bytes"))
    std::printf("peak GPU memory\t%.2f GiB\n", r["peak_gpu_memory_bytes"].get<double>() / (1 << 30));
  if (r.contains("data_wait_s")) std::printf("waiting for data\t%.3f s\n", r["data_wait_s"].get<double>());
  if (r.contains("seconds_per_document"))
    std::printf("s/document\t%.4f\n", r["seconds_per_document"].get<double>());
  if (r.contains("tokens_per_s"))
    std::printf("documents\t%lld\ntokens/s\t%.1f\n", static_cast<long long>(r["documents"].get<int64_t>()),
                r["tokens_per_s"].get<double>());
  // "documents" counts windows; the rows they come from, and what of the data was not evaluated.
  if (r.contains("rows"))
    std::printf("windows\t%lld\nrows\t%lld\ntokens dropped\t%lld\nrows not read\t%lld\n",
                static_cast<long long>(r["windows"].get<int64_t>()), static_cast<long long>(r["rows"].get<int64_t>()),
                static_cast<long long>(r["tokens_dropped"].get<int64_t>()),
                static_cast<long long>(r["rows_unread"].get<int64_t>()));
  if (r.contains("documents_skipped"))  // --text: documents shorter than a window
    std::printf("documents skipped\t%lld\ntokens skipped\t%lld\n",
                static_cast<long long>(r["documents_skipped"].get<int64_t>()),
                static_cast<long long>(r["tokens_skipped"].get<int64_t>()));
}

}  // namespace foxeval::loss
