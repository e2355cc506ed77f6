#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Gives every UDF call its own projection node, and the async I/O functions (url_*) theirs, so the
/// executor can schedule each on its own workers (a UDF's threads or processes, the I/O pool) with
/// its own batch size, instead of running cheap kernels on a UDF's workers. A projection
/// `[a + 1 as a2, udf(b) as u, url_download(c) as d, col(e)]` becomes
/// `Project[a2, u, d, e] ← Project[.., u] ← Project[.., d] ← Project[a + 1 as a2, pass-through]`.
/// Runs once, after filter and projection pushdown (Daft's SplitUDFs / SplitActorPoolProjects).
/// Decoders whose output dwarfs their input (image_decode, audio_decode, video_frames, ...) get a
/// stage of their own too, and an audio or video kernel over a File column gets its read spelled
/// out as `file_read`, an I/O stage of its own (`audio_decode(f)` → `audio_decode(file_read(f))`).
/// Left alone when a stage would shadow a column a later stage reads.
class SplitUdfProjections : public OptimizerRule {
 public:
  std::string name() const override { return "SplitUdfProjections"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
