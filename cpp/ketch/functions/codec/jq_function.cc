// jq: a jq program (libjq from Debian's libjq-dev: the jq 1.6 language) on each row's JSON text,
// run in a ketch-jq-worker process (cpp/jq_worker): libjq has no step limit, no cancellation hook
// and aborts the process on some inputs, so it runs where it can be killed (see build-notes.md).
// Daft runs jaq instead; the two languages agree on ordinary filters (paths, pipes, map, select,
// object construction) and differ on a few corners (see jaq's README).

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/codec/codec_functions.h"
#include "ketch/functions/codec/jq_worker_client.h"

namespace ketch::codec {
namespace {

/// libjq constructs that cannot run here: modules (libjq 1.6 aborts the process on a module it
/// cannot find), reading further inputs (there are none: each row is one input; `input` crashed
/// libjq), and builtins that print to the worker's stderr or expose the program's location.
constexpr const char* kRejected[] = {"import",          "include",           "input",    "inputs",
                                     "input_filename",  "input_line_number", "debug",    "stderr",
                                     "get_search_list", "modulemeta",        "$__loc__", "$__prog_args"};

/// Plan-time checks of the filter text: no NUL byte (libjq would silently stop reading there), and
/// none of kRejected as a name (outside string literals; `.input` as a field and `{input: 1}` as
/// an object key are fine). `halt` / `halt_error` run and give the row an error.
arrow::Status CheckFilterText(const std::string& filter) {
  if (filter.find('\0') != std::string::npos) {
    return arrow::Status::Invalid("jq: invalid filter: it contains a NUL byte at offset ", filter.find('\0'));
  }
  // A scan of jq's tokens: string literals (with \(...) interpolations, which hold code) skipped.
  std::vector<int> string_depth;  // for each open interpolation: the paren depth it started at
  int parens = 0;
  bool in_string = false;
  for (size_t i = 0; i < filter.size(); ++i) {
    const char c = filter[i];
    if (in_string) {
      if (c == '\\' && i + 1 < filter.size()) {
        if (filter[i + 1] == '(') {  // interpolation: code until the matching ')'
          in_string = false;
          string_depth.push_back(parens);
          ++parens;
        }
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '#') {  // a comment to the end of the line
      while (i < filter.size() && filter[i] != '\n') ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c == '(') ++parens;
    if (c == ')') {
      --parens;
      if (!string_depth.empty() && parens == string_depth.back()) {
        string_depth.pop_back();
        in_string = true;
      }
      continue;
    }
    const bool dollar = c == '$';
    if (!dollar && !(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) continue;
    size_t j = i + 1;
    while (j < filter.size() && (std::isalnum(static_cast<unsigned char>(filter[j])) || filter[j] == '_'))
      ++j;
    const std::string name = filter.substr(i, j - i);
    // A field (.name), or an object key ({name: ...}): not a call.
    size_t before = i;
    while (before > 0 && std::isspace(static_cast<unsigned char>(filter[before - 1]))) --before;
    size_t after = j;
    while (after < filter.size() && std::isspace(static_cast<unsigned char>(filter[after]))) ++after;
    const bool field = !dollar && before > 0 && filter[before - 1] == '.';
    const bool key = !dollar && after < filter.size() && filter[after] == ':' &&
                     (after + 1 >= filter.size() || filter[after + 1] != ':');
    if (!field && !key) {
      for (const char* rejected : kRejected) {
        if (name == rejected) {
          return arrow::Status::Invalid("jq: the filter uses '", name,
                                        "', which Ketch does not run (modules, further inputs and "
                                        "stderr output are not available: each row is one input)");
        }
      }
    }
    i = j - 1;
  }
  return arrow::Status::OK();
}

/// Limits of the worker for a query with this memory budget (0: unknown): the address space of
/// the worker process is capped, so a filter that builds an unbounded value fails instead of
/// exhausting the machine.
JqLimits LimitsFor(int64_t memory_budget_bytes) {
  JqLimits limits;
  constexpr uint64_t kMiB = 1ULL << 20;
  // The worker's own memory is not charged to the budget: keep it within [256 MiB, 1 GiB] of it
  // (plus libjq's own footprint); a JSON row whose filter needs more fails instead.
  const uint64_t budget = memory_budget_bytes > 0 ? static_cast<uint64_t>(memory_budget_bytes) : 1024 * kMiB;
  limits.address_space_bytes = std::clamp<uint64_t>(budget, 256 * kMiB, 1024 * kMiB) + 128 * kMiB;
  limits.max_output_bytes = std::min<uint64_t>(limits.max_output_bytes, limits.address_space_bytes / 4);
  return limits;
}

/// This thread's jq workers by (filter, address-space limit) (a few filters per query at most).
arrow::Result<JqWorker*> WorkerFor(const std::string& filter, const JqLimits& limits) {
  thread_local std::map<std::pair<std::string, uint64_t>, std::unique_ptr<JqWorker>> workers;
  const auto key = std::make_pair(filter, limits.address_space_bytes);
  auto it = workers.find(key);
  if (it != workers.end() && it->second->alive()) return it->second.get();
  if (it != workers.end()) workers.erase(it);
  if (workers.size() >= 8) workers.clear();
  ARROW_RETURN_NOT_OK(CheckFilterText(filter));
  ARROW_ASSIGN_OR_RAISE(auto worker, JqWorker::Start(filter, limits));
  return workers.emplace(key, std::move(worker)).first->second.get();
}

class JqFunction : public ScalarFunction {
 public:
  std::string name() const override { return "jq"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("jq takes one argument");
    if (arg_types[0]->id() != arrow::Type::NA && !arrow::is_string(arg_types[0]->id())) {
      return arrow::Status::TypeError("jq expects a string column of JSON texts, got ",
                                      arg_exprs[0]->ToString(), " of type ", arg_types[0]->ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto filter, GetStringOption(options, "filter", "jq"));
    ARROW_RETURN_NOT_OK(WorkerFor(filter, LimitsFor(0)).status());  // a bad filter fails at plan time
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA)
      return arrow::MakeArrayOfNull(arrow::large_utf8(), input->length());
    ARROW_ASSIGN_OR_RAISE(auto filter, GetStringOption(options, "filter", "jq"));
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& texts = static_cast<const arrow::LargeStringArray&>(*strings);
    std::vector<std::string_view> rows;
    for (int64_t i = 0; i < texts.length(); ++i) {
      if (!texts.IsNull(i)) rows.push_back(texts.GetView(i));
    }
    std::vector<JqRowResult> results;
    if (!rows.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto* worker, WorkerFor(filter, LimitsFor(ctx.memory_budget_bytes)));
      const JqLimits limits = LimitsFor(ctx.memory_budget_bytes);
      int64_t failed = -1;
      auto ran = worker->Run(rows, ctx.cancelled, &failed);
      if (!ran.ok()) {
        if (ran.status().IsCancelled() || failed < 0) return ran.status();
        // The worker died on a row after the answered ones (its replies are buffered): run the
        // unanswered rows again one at a time, each in a fresh worker, to find which one.
        arrow::Status death = ran.status();
        int64_t bad = failed;
        for (auto r = static_cast<size_t>(failed); r < rows.size(); ++r) {
          ARROW_ASSIGN_OR_RAISE(auto* single, WorkerFor(filter, limits));
          int64_t unused = -1;
          auto one = single->Run({rows[r]}, ctx.cancelled, &unused);
          if (one.ok()) continue;
          if (one.status().IsCancelled()) return one.status();
          bad = static_cast<int64_t>(r);
          death = one.status();
          break;
        }
        int64_t row = 0;  // the bad-th non-null row
        for (int64_t seen = -1; row < texts.length(); ++row) {
          if (!texts.IsNull(row) && ++seen == bad) break;
        }
        return arrow::Status::Invalid("jq failed at source row ",
                                      ctx.SourceRow(std::min(row, texts.length() - 1)), " (filter '", filter,
                                      "'): ", death.message());
      }
      results = std::move(*ran);
    }
    arrow::LargeStringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(texts.length()));
    size_t next = 0;
    for (int64_t i = 0; i < texts.length(); ++i) {
      if (texts.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      const JqRowResult& result = results[next++];
      switch (result.kind) {
        case JqRowResult::Kind::kError:
          return arrow::Status::Invalid("jq failed at source row ", ctx.SourceRow(i), " (filter '", filter,
                                        "'): ", result.text);
        case JqRowResult::Kind::kOutput:
          ARROW_RETURN_NOT_OK(builder.Append(result.text));
          break;
        case JqRowResult::Kind::kNoOutput:
          ARROW_RETURN_NOT_OK(builder.AppendNull());
          break;
      }
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterJqFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<JqFunction>());
}

}  // namespace ketch::codec
