// jq: a jq program (libjq from Debian's libjq-dev: the jq 1.6 language) on each row's JSON text.
// Daft runs jaq instead; the two languages agree on ordinary filters (paths, pipes, map, select,
// object construction) and differ on a few corners (see jaq's README).

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <jq.h>
#include <jv.h>
}

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/codec/codec_functions.h"

namespace ketch::codec {
namespace {

/// Takes ownership of `value`; returns its text (a string's own text, anything else as JSON).
std::string JvToMessage(jv value) {
  if (jv_get_kind(value) == JV_KIND_STRING) {
    std::string text(jv_string_value(value), static_cast<size_t>(jv_string_length_bytes(jv_copy(value))));
    jv_free(value);
    return text;
  }
  jv dumped = jv_dump_string(value, 0);
  std::string text(jv_string_value(dumped));
  jv_free(dumped);
  return text;
}

/// Takes ownership of `value`; compact JSON text, UTF-8, keys in their order.
std::string JvToJson(jv value) {
  jv dumped = jv_dump_string(value, 0);
  std::string text(jv_string_value(dumped), static_cast<size_t>(jv_string_length_bytes(jv_copy(dumped))));
  jv_free(dumped);
  return text;
}

/// libjq's parse errors end with " (while parsing '<the whole text>')": drop the text.
std::string WithoutText(std::string message) {
  auto at = message.find(" (while parsing '");
  if (at != std::string::npos) message.resize(at);
  return message;
}

/// One compiled jq program. Not shareable between threads: each thread compiles its own.
class JqProgram {
 public:
  static arrow::Result<std::unique_ptr<JqProgram>> Compile(const std::string& filter) {
    std::unique_ptr<JqProgram> program(new JqProgram());
    program->state_ = jq_init();
    if (program->state_ == nullptr) return arrow::Status::OutOfMemory("jq: jq_init failed");
    // Without a callback libjq prints errors to stderr.
    jq_set_error_cb(program->state_, &JqProgram::CollectError, program.get());
    bool compiled;
    {
      // libjq 1.6's compiler is not known to be thread-safe; compiling is rare (once per thread).
      static std::mutex compile_mutex;
      std::lock_guard<std::mutex> lock(compile_mutex);
      compiled = jq_compile(program->state_, filter.c_str()) != 0;
    }
    if (!compiled) {
      return arrow::Status::Invalid("jq: invalid filter '", filter,
                                    "': ", program->errors_.empty() ? "does not compile" : program->errors_);
    }
    return program;
  }

  ~JqProgram() {
    if (state_ != nullptr) jq_teardown(&state_);
  }

  /// Runs the program on one JSON text: nullopt-like empty `has_output` for no output.
  arrow::Status Run(std::string_view json, bool* has_output, std::string* output) {
    errors_.clear();
    jv input = jv_parse_sized(json.data(), static_cast<int>(json.size()));
    if (!jv_is_valid(input)) {
      jv message = jv_invalid_get_msg(input);
      return arrow::Status::Invalid("invalid JSON: ", jv_get_kind(message) == JV_KIND_NULL
                                                          ? std::string("?")
                                                          : WithoutText(JvToMessage(message)));
    }
    jq_start(state_, input, 0);
    std::vector<jv> results;
    auto free_results = [&] {
      for (jv& value : results) jv_free(value);
      results.clear();
    };
    while (true) {
      jv next = jq_next(state_);
      if (jv_is_valid(next)) {
        results.push_back(next);
        continue;
      }
      if (jv_invalid_has_msg(jv_copy(next))) {
        free_results();
        return arrow::Status::Invalid("jq error: ", JvToMessage(jv_invalid_get_msg(next)));
      }
      jv_free(next);
      break;
    }
    *has_output = !results.empty();
    if (results.size() == 1) {
      *output = JvToJson(results[0]);
    } else if (results.size() > 1) {
      // Several outputs: one JSON array of them, so every row stays one JSON text (as Daft).
      jv array = jv_array();
      for (jv& value : results) array = jv_array_append(array, value);
      *output = JvToJson(array);
    }
    results.clear();
    return arrow::Status::OK();
  }

 private:
  JqProgram() = default;

  static void CollectError(void* data, jv message) {
    auto* program = static_cast<JqProgram*>(data);
    if (!program->errors_.empty()) program->errors_ += "; ";
    program->errors_ += JvToMessage(message);
  }

  jq_state* state_ = nullptr;
  std::string errors_;
};

/// This thread's compiled programs by filter text (a few filters per query at most).
arrow::Result<JqProgram*> ProgramFor(const std::string& filter) {
  thread_local std::map<std::string, std::unique_ptr<JqProgram>> programs;
  auto it = programs.find(filter);
  if (it != programs.end()) return it->second.get();
  if (programs.size() >= 32) programs.clear();
  ARROW_ASSIGN_OR_RAISE(auto program, JqProgram::Compile(filter));
  return programs.emplace(filter, std::move(program)).first->second.get();
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
    ARROW_RETURN_NOT_OK(ProgramFor(filter).status());  // a bad filter fails at plan time
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA)
      return arrow::MakeArrayOfNull(arrow::large_utf8(), input->length());
    ARROW_ASSIGN_OR_RAISE(auto filter, GetStringOption(options, "filter", "jq"));
    ARROW_ASSIGN_OR_RAISE(auto* program, ProgramFor(filter));
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& texts = static_cast<const arrow::LargeStringArray&>(*strings);
    arrow::LargeStringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(texts.length()));
    std::string output;
    for (int64_t i = 0; i < texts.length(); ++i) {
      if (texts.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      bool has_output = false;
      auto status = program->Run(texts.GetView(i), &has_output, &output);
      if (!status.ok()) {
        return status.WithMessage("jq failed at source row ", ctx.SourceRow(i), " (filter '", filter,
                                  "'): ", status.message());
      }
      if (has_output) {
        ARROW_RETURN_NOT_OK(builder.Append(output));
      } else {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
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
