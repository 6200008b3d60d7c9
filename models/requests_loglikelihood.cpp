// loglikelihood: lm-eval HFLM._loglikelihood_tokens on the engine. Each request's model input is
// (context + continuation)[-(max_length + 1):][:-1]; the continuation's log-likelihood is read at
// its last len(continuation) input positions; is_greedy = the argmax is the continuation token at
// every one of them. Rows are right-padded (with token 0, as lm-eval's pad_and_concat): a causal
// model's earlier positions never see the padding, so the batch a request falls in does not change
// its answer beyond device numerics.
#include <ATen/Functions.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "data/errors.h"
#include "models/engine.h"
#include "models/layers/layers.h"
#include "models/requests.h"

namespace foxeval {
namespace {

// One forward row: an input token sequence and the requests that read it. Requests whose inputs
// are equal (lm-eval's "one-token continuation cache": the same context and all but the last
// continuation token) share the row, as lm-eval computes them once.
struct ForwardRow {
  std::vector<int64_t> input;
  std::vector<size_t> members;
};

// Argmax over the vocabulary of hidden [1, N, H] through the LM head, `chunk` positions at a time
// (full logits for long continuations would be N x vocab). Ties go to the lowest id, as
// torch.argmax on lm-eval's log-softmax.
at::Tensor argmax_from_hidden(const at::Tensor& head, const at::Tensor& hidden) {
  const int64_t N = hidden.size(1), V = head.size(0);
  const int64_t chunk = std::max<int64_t>(1, (int64_t(64) << 20) / V);
  // Same alignment padding as engine.cpp's logprobs_from_hidden (fast cuBLAS path); the padded
  // rows are cut before the argmax.
  const at::Tensor padded = head.is_cuda() && V % 64 != 0 ? at::constant_pad_nd(head, {0, 0, 0, 64 - V % 64}) : head;
  at::Tensor out = at::empty({N}, hidden.options().dtype(at::kLong));
  for (int64_t t0 = 0; t0 < N; t0 += chunk) {
    const int64_t t1 = std::min(N, t0 + chunk);
    at::Tensor lg = foxeval::linear(hidden.slice(1, t0, t1), padded).narrow(-1, 0, V);
    out.slice(0, t0, t1).copy_(lg.argmax(-1).reshape({-1}));
  }
  return out;
}

}  // namespace

void loglikelihood(CausalLM& model, const std::vector<LoglikelihoodRequest>& requests,
                   const LoglikelihoodOptions& options,
                   const std::function<void(size_t, const LoglikelihoodAnswer&)>& on_done) {
  if (options.max_length < 1) throw Error(fmt::format("loglikelihood: max_length {} must be >= 1", options.max_length));
  if (options.batch_size < 0) throw Error(fmt::format("loglikelihood: batch size {} must be >= 0", options.batch_size));
  if (options.batch_size == 0 && options.max_batch_tokens < 1)
    throw Error(fmt::format("loglikelihood: max batch tokens {} must be >= 1", options.max_batch_tokens));
  const at::Tensor& head = model.lm_head();
  const int64_t vocab = head.size(0);

  std::vector<ForwardRow> rows;
  std::map<std::vector<int64_t>, size_t> row_of_input;
  for (size_t i = 0; i < requests.size(); ++i) {
    const LoglikelihoodRequest& r = requests[i];
    // lm-eval's asserts, as errors naming the request.
    if (r.context.empty()) throw Error(fmt::format("loglikelihood: request {} has an empty context", i));
    if (r.continuation.empty()) throw Error(fmt::format("loglikelihood: request {} has an empty continuation", i));
    if (static_cast<int64_t>(r.continuation.size()) > options.max_length)
      throw Error(fmt::format("loglikelihood: request {}: continuation of {} tokens is longer than max length {}", i,
                              r.continuation.size(), options.max_length));
    for (const auto* part : {&r.context, &r.continuation})
      for (int64_t id : *part)
        if (id < 0 || id >= vocab)
          throw Error(fmt::format("loglikelihood: request {}: token id {} outside the model's vocabulary [0, {})", i, id,
                                  vocab));
    std::vector<int64_t> full(r.context);
    full.insert(full.end(), r.continuation.begin(), r.continuation.end());
    const size_t keep = std::min<size_t>(full.size(), static_cast<size_t>(options.max_length) + 1);
    std::vector<int64_t> input(full.end() - static_cast<std::ptrdiff_t>(keep), full.end() - 1);
    auto [it, fresh] = row_of_input.emplace(std::move(input), rows.size());
    if (fresh) rows.push_back(ForwardRow{it->first, {}});
    rows[it->second].members.push_back(i);
  }
  row_of_input.clear();

  // Longest first (as lm-eval's Collator): the largest batch shape comes first, so an out-of-memory
  // shows at once, and rows of similar length share a batch (little padding).
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows[a].input.size() > rows[b].input.size(); });

  const at::Device device = head.device();
  size_t start = 0;
  while (start < order.size()) {
    const int64_t T = static_cast<int64_t>(rows[order[start]].input.size());
    size_t end = start + 1;
    while (end < order.size() &&
           (options.batch_size > 0 ? static_cast<int64_t>(end - start) < options.batch_size
                                   : T * static_cast<int64_t>(end - start + 1) <= options.max_batch_tokens))
      ++end;
    const int64_t B = static_cast<int64_t>(end - start);

    at::Tensor ids = at::zeros({B, T}, at::kLong);  // right padding with 0, as lm-eval
    auto ids_a = ids.accessor<int64_t, 2>();
    // Continuation positions of every member request, flattened over the batch, and their tokens.
    std::vector<int64_t> positions, labels;
    std::vector<std::pair<size_t, size_t>> spans;  // request, first index into positions
    for (int64_t b = 0; b < B; ++b) {
      const ForwardRow& row = rows[order[start + static_cast<size_t>(b)]];
      const int64_t inplen = static_cast<int64_t>(row.input.size());
      for (int64_t t = 0; t < inplen; ++t) ids_a[b][t] = row.input[static_cast<size_t>(t)];
      for (size_t m : row.members) {
        const std::vector<int64_t>& cont = requests[m].continuation;
        const int64_t contlen = static_cast<int64_t>(cont.size());
        spans.emplace_back(m, positions.size());
        for (int64_t k = 0; k < contlen; ++k) {
          positions.push_back(b * T + inplen - contlen + k);
          labels.push_back(cont[static_cast<size_t>(k)]);
        }
      }
    }
    const int64_t N = static_cast<int64_t>(positions.size());
    at::Tensor hidden = model.forward(ids.to(device), nullptr);  // [B, T, H]
    const at::Tensor pos = at::tensor(positions, at::kLong).to(device);
    const at::Tensor picked = hidden.reshape({B * T, hidden.size(2)}).index_select(0, pos).unsqueeze(0);  // [1, N, H]
    hidden = at::Tensor();
    const at::Tensor lab = at::tensor(labels, at::kLong).view({1, N});
    const at::Tensor lp = logprobs_from_hidden(model, picked, lab.to(device)).to(at::kCPU).to(at::kDouble).reshape({-1});
    const at::Tensor greedy = argmax_from_hidden(head, picked).to(at::kCPU);
    const double* lp_p = lp.data_ptr<double>();
    const int64_t* greedy_p = greedy.data_ptr<int64_t>();
    for (const auto& [m, first] : spans) {
      LoglikelihoodAnswer answer;
      answer.is_greedy = true;
      for (size_t k = first; k < first + requests[m].continuation.size(); ++k) {
        answer.logprob += lp_p[k];
        answer.is_greedy = answer.is_greedy && greedy_p[k] == labels[k];
      }
      on_done(m, answer);
    }
    start = end;
  }
}

}  // namespace foxeval
