#pragma once

#include <arrow/api.h>

#include <array>
#include <string_view>

#include "ketch/functions/media/video_decoder.h"

namespace ketch::media {

/// The per-frame fields of Daft's frame rows (`video_frames` structs, `read_video_frames`
/// columns), built column by column: frame_index (int64), frame_time (float64, seconds),
/// frame_time_base (string, "1/12800"), frame_pts, frame_dts, frame_duration (int64, time-base
/// units), is_key_frame (bool); a missing timestamp is null.
class FrameFieldBuilders {
 public:
  static constexpr std::array<std::string_view, 7> kNames = {"frame_index", "frame_time", "frame_time_base",
                                                             "frame_pts",   "frame_dts",  "frame_duration",
                                                             "is_key_frame"};

  arrow::Status Append(const VideoFrameInfo& info) {
    ARROW_RETURN_NOT_OK(index_.Append(info.frame_index));
    ARROW_RETURN_NOT_OK(info.frame_time ? time_.Append(*info.frame_time) : time_.AppendNull());
    ARROW_RETURN_NOT_OK(info.frame_time_base.empty() ? time_base_.AppendNull()
                                                     : time_base_.Append(info.frame_time_base));
    ARROW_RETURN_NOT_OK(info.frame_pts ? pts_.Append(*info.frame_pts) : pts_.AppendNull());
    ARROW_RETURN_NOT_OK(info.frame_dts ? dts_.Append(*info.frame_dts) : dts_.AppendNull());
    ARROW_RETURN_NOT_OK(info.frame_duration ? duration_.Append(*info.frame_duration)
                                            : duration_.AppendNull());
    return key_.Append(info.is_key_frame);
  }

  /// The columns in kNames order; the builders start empty again.
  arrow::Result<arrow::ArrayVector> Finish() {
    arrow::ArrayVector out(kNames.size());
    ARROW_RETURN_NOT_OK(index_.Finish(&out[0]));
    ARROW_RETURN_NOT_OK(time_.Finish(&out[1]));
    ARROW_RETURN_NOT_OK(time_base_.Finish(&out[2]));
    ARROW_RETURN_NOT_OK(pts_.Finish(&out[3]));
    ARROW_RETURN_NOT_OK(dts_.Finish(&out[4]));
    ARROW_RETURN_NOT_OK(duration_.Finish(&out[5]));
    ARROW_RETURN_NOT_OK(key_.Finish(&out[6]));
    return out;
  }

 private:
  arrow::Int64Builder index_, pts_, dts_, duration_;
  arrow::DoubleBuilder time_;
  arrow::StringBuilder time_base_;
  arrow::BooleanBuilder key_;
};

}  // namespace ketch::media
