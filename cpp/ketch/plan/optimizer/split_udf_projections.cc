#include "ketch/plan/optimizer/split_udf_projections.h"

#include <map>
#include <set>

#include "ketch/expr/lambda_call.h"
#include "ketch/types/file_type.h"

namespace ketch {
namespace {

bool IsIoCall(const Expr& expr) {
  return expr.kind() == ExprKind::kCall && (expr.name().rfind("url_", 0) == 0 || expr.name() == "file_read");
}

bool HasIoCall(const Expr& expr) {
  if (IsIoCall(expr)) return true;
  for (const auto& child : expr.children()) {
    if (HasIoCall(*child)) return true;
  }
  return false;
}

bool IsPassThrough(const Expr& expr) {
  return expr.kind() == ExprKind::kColumn ||
         (expr.kind() == ExprKind::kAlias && expr.children()[0]->kind() == ExprKind::kColumn &&
          expr.children()[0]->name() == expr.name());
}

std::set<std::string> Reads(const Expr& expr) {
  std::set<std::string> out;
  expr.CollectColumns(&out);
  return out;
}

// Kernels whose output dwarfs their input (a decoded image is ~100x its file): nested inside
// another expression their output would be an intermediate the executor never sees, so their
// morsels could not be sized by it (64 decoded 1024x1024 images in flight inside one
// `image_resize(image_decode(b))` call). A stage of their own makes it a morsel's output.
bool IsGrowingCall(const Expr& expr) {
  return expr.kind() == ExprKind::kCall &&
         (expr.name() == "image_decode" || expr.name() == "audio_decode" || expr.name() == "video_frames" ||
          expr.name() == "video_keyframes" || expr.name() == "get_video_frame_by_idx" ||
          expr.name() == "pdf_render" || expr.name() == "media_decode");
}

// Audio and video kernels over a File column read each object through `file_read` inside the
// call, blocking a compute thread on the I/O pool. Spelled out as `kernel(file_read(f))`, the read
// is an I/O call of its own: the split below gives it a stage on the I/O pool, overlapped with the
// decoding of earlier morsels. The read takes the call's I/O options and on_error (an unreadable
// file is then a null the kernel passes on). PDF kernels keep their reads: they check a 1 KiB
// prefix before reading a whole object.
bool IsMediaFileKernel(const std::string& name) {
  return name == "audio_decode" || name == "audio_metadata" || name == "video_metadata" ||
         name == "video_frames" || name == "video_keyframes" || name == "get_video_frame_by_idx" ||
         name == "media_decode";
}

arrow::Result<ExprPtr> ExposeFileReads(const ExprPtr& expr, const arrow::Schema& schema) {
  if (expr->kind() == ExprKind::kColumn || expr->kind() == ExprKind::kLiteral) return expr;
  std::vector<ExprPtr> children;
  bool changed = false;
  for (const auto& child : expr->children()) {
    ARROW_ASSIGN_OR_RAISE(auto next, ExposeFileReads(child, schema));
    changed |= next != child;
    children.push_back(std::move(next));
  }
  if (expr->kind() == ExprKind::kCall && IsMediaFileKernel(expr->name()) && !children.empty()) {
    auto field = ResolveField(*children[0], schema);
    if (field.ok() && IsFileType(*(*field)->type())) {
      FunctionOptions read_options{{"with_path", std::make_shared<arrow::BooleanScalar>(true)}};
      for (const auto& [key, value] : expr->options()) {
        if (key == "on_error" || key.rfind("s3_", 0) == 0 || key.rfind("http_", 0) == 0)
          read_options[key] = value;
      }
      children[0] = Expr::Call("file_read", {children[0]}, std::move(read_options));
      changed = true;
    }
  }
  return changed ? expr->WithChildren(std::move(children)) : expr;
}

bool HasGrowingCall(const Expr& expr) {
  if (IsGrowingCall(expr)) return true;
  for (const auto& child : expr.children()) {
    if (HasGrowingCall(*child)) return true;
  }
  return false;
}

bool IsSpecial(const Expr& expr) {
  return expr.kind() == ExprKind::kUdf || IsIoCall(expr) || IsGrowingCall(expr);
}

ExprPtr WithChildren(const ExprPtr& expr, std::vector<ExprPtr> children) {
  switch (expr->kind()) {
    case ExprKind::kAlias:
      return Expr::Alias(children[0], expr->name());
    case ExprKind::kCast:
      return Expr::Cast(children[0], expr->type());
    case ExprKind::kUdf:
      return Expr::Udf(expr->udf(), std::move(children), expr->type(), expr->udf_properties());
    default:
      return Expr::Call(expr->name(), std::move(children), expr->options());
  }
}

// The stages of one projection's special calls (UDFs, I/O functions and image decodes): each call nested
// inside another expression (`image_decode(url_download(u))`, `double(add_one(x))`) is replaced by a column
// `__ketch_split_<n>` computed by a stage of its own, innermost first, so a download runs on the I/O pool and
// the kernels above it on the compute pool, and chained UDFs run on their own workers and overlap (Daft's
// SplitGranularProjection / SplitUDFs).
class StageBuilder {
 public:
  explicit StageBuilder(const std::set<std::string>& input_names) : input_names_(input_names) {}

  /// Adds `expr` (an output of the projection that calls UDFs or I/O functions).
  void Add(const ExprPtr& expr) {
    ExprPtr rest = Extract(expr, /*root=*/true);
    // `g(f(x))` is named after its first argument, `x`; with `f(x)` split off, the rest reads
    // `g(__ketch_split_0)` and would be named after the temporary: keep the original name.
    if (rest->OutputName() != expr->OutputName()) rest = Expr::Alias(rest, expr->OutputName());
    const Expr* root = rest.get();
    while (root->kind() == ExprKind::kAlias) root = root->children()[0].get();
    if (IsSpecial(*root)) {
      Place(rest, IsIoCall(*root));
    } else {
      above_.push_back(rest);  // kernels over the split-off calls' columns
    }
  }

  /// The I/O calls that read input columns only (one stage, first), the other calls (one stage
  /// each, in dependency order), then the kernels above them.
  std::vector<std::vector<ExprPtr>> Stages() const {
    std::vector<std::vector<ExprPtr>> stages;
    if (!io_first_.empty()) stages.push_back(io_first_);
    stages.insert(stages.end(), ordered_.begin(), ordered_.end());
    if (!above_.empty()) stages.push_back(above_);
    return stages;
  }
  const std::set<std::string>& temps() const { return temps_; }

 private:
  ExprPtr Extract(const ExprPtr& expr, bool root) {
    if (expr->kind() == ExprKind::kColumn || expr->kind() == ExprKind::kLiteral) return expr;
    const bool child_is_root = root && expr->kind() == ExprKind::kAlias;
    std::vector<ExprPtr> children;
    bool changed = false;
    const bool lambda = IsLambdaCall(*expr);
    for (const auto& child : expr->children()) {
      // A lambda's bodies run on the list's values inside the call: nothing in them splits off.
      children.push_back(lambda && !children.empty() ? child : Extract(child, child_is_root));
      changed |= children.back() != child;
    }
    ExprPtr current = changed ? WithChildren(expr, std::move(children)) : expr;
    if (root || !IsSpecial(*current)) return current;
    // The same I/O call twice (`audio_metadata(f)` and `audio_decode(f)` both read f): one read.
    const std::string key = current->ToString();
    if (IsIoCall(*current)) {
      if (auto it = io_temps_.find(key); it != io_temps_.end()) return Expr::Column(it->second);
    }
    std::string name;
    for (size_t n = temps_.size(); name.empty() || input_names_.count(name); ++n) {
      name = "__ketch_split_" + std::to_string(n);
    }
    temps_.insert(name);
    if (IsIoCall(*current)) io_temps_[key] = name;
    Place(Expr::Alias(current, name), IsIoCall(*current));
    return Expr::Column(name);
  }

  void Place(const ExprPtr& expr, bool io) {
    bool reads_split = false;
    for (const auto& name : Reads(*expr)) reads_split |= temps_.count(name) > 0;
    if (io && !reads_split) {
      io_first_.push_back(expr);
    } else {
      ordered_.push_back({expr});
    }
  }

  const std::set<std::string>& input_names_;
  std::set<std::string> temps_;
  std::map<std::string, std::string> io_temps_;  // an I/O call's rendering → its column
  std::vector<ExprPtr> io_first_;
  std::vector<std::vector<ExprPtr>> ordered_;
  std::vector<ExprPtr> above_;
};

arrow::Result<Transformed> SplitOne(const LogicalPlanPtr& plan) {
  std::vector<ExprPtr> exprs;
  bool exposed = false;
  for (const auto& expr : plan->exprs()) {
    ARROW_ASSIGN_OR_RAISE(auto next, ExposeFileReads(expr, *plan->inputs()[0]->schema()));
    exposed |= next != expr;
    exprs.push_back(std::move(next));
  }
  std::vector<ExprPtr> plain;
  std::set<std::string> input_names;
  for (const auto& field : plan->inputs()[0]->schema()->fields()) input_names.insert(field->name());
  StageBuilder builder(input_names);
  int computed_plain = 0;
  for (const auto& expr : exprs) {
    if (expr->HasUdf() || HasIoCall(*expr) || HasGrowingCall(*expr)) {
      builder.Add(expr);
    } else {
      plain.push_back(expr);
      if (!IsPassThrough(*expr)) ++computed_plain;
    }
  }
  const auto stages = builder.Stages();
  const auto& temps = builder.temps();
  // Already alone: one special stage next to pass-through columns only.
  if (stages.empty() || (stages.size() == 1 && computed_plain == 0)) return Transformed{plan, false};
  // Every stage reads the projection's input: no earlier stage may replace a column it reads.
  std::set<std::string> written;
  for (const auto& expr : plain) {
    if (!IsPassThrough(*expr)) written.insert(expr->OutputName());
  }
  for (const auto& stage : stages) {
    for (const auto& expr : stage) {
      for (const auto& name : Reads(*expr)) {
        if (written.count(name) && !temps.count(name)) return Transformed{plan, false};
      }
    }
    for (const auto& expr : stage) written.insert(expr->OutputName());
  }
  const auto& input = plan->inputs()[0];
  // Stage 0: the plain expressions, and every input column they do not replace.
  std::vector<ExprPtr> first = plain;
  std::set<std::string> names;
  for (const auto& expr : plain) names.insert(expr->OutputName());
  for (const auto& field : input->schema()->fields()) {
    if (!names.count(field->name())) {
      first.push_back(Expr::Column(field->name()));
      names.insert(field->name());
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto current, LogicalPlan::Project(input, first));
  for (const auto& stage : stages) {
    std::set<std::string> outputs;
    for (const auto& expr : stage) outputs.insert(expr->OutputName());
    std::vector<ExprPtr> next;
    for (const auto& field : current->schema()->fields()) {
      if (!outputs.count(field->name())) next.push_back(Expr::Column(field->name()));
    }
    next.insert(next.end(), stage.begin(), stage.end());
    ARROW_ASSIGN_OR_RAISE(current, LogicalPlan::Project(current, next));
  }
  std::vector<ExprPtr> last;
  for (const auto& expr : exprs) last.push_back(Expr::Column(expr->OutputName()));
  ARROW_ASSIGN_OR_RAISE(current, LogicalPlan::Project(current, last));
  return Transformed{current, true};
}

}  // namespace

arrow::Result<Transformed> SplitUdfProjections::Apply(const LogicalPlanPtr& plan) const {
  bool changed = false;
  std::vector<LogicalPlanPtr> inputs;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto result, Apply(input));
    changed |= result.changed;
    inputs.push_back(result.plan);
  }
  LogicalPlanPtr current = plan;
  if (changed) {
    ARROW_ASSIGN_OR_RAISE(current, plan->WithInputs(inputs));
  }
  if (current->kind() != LogicalKind::kProject) return Transformed{current, changed};
  ARROW_ASSIGN_OR_RAISE(auto split, SplitOne(current));
  return Transformed{split.plan, changed || split.changed};
}

}  // namespace ketch
