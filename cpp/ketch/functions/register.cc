#include "ketch/functions/register.h"

#include <arrow/compute/initialize.h>

#include <mutex>

#include "ketch/functions/codec/codec_functions.h"
#include "ketch/functions/embedding/embedding_functions.h"
#include "ketch/functions/file/file_functions.h"
#include "ketch/functions/image/image_functions.h"
#include "ketch/functions/internal/source_row_function.h"
#include "ketch/functions/math/math_functions.h"
#include "ketch/functions/media/audio_functions.h"
#include "ketch/functions/media/media_decode_function.h"
#include "ketch/functions/media/video_functions.h"
#include "ketch/functions/nested/nested_functions.h"
#include "ketch/functions/partitioning/partitioning_functions.h"
#include "ketch/functions/pdf/pdf_functions.h"
#include "ketch/functions/per_row_option.h"
#include "ketch/functions/random/random_functions.h"
#include "ketch/functions/string/string_functions.h"
#include "ketch/functions/temporal/temporal_functions.h"
#include "ketch/functions/tokenize/tokenize_functions.h"
#include "ketch/functions/url/url_functions.h"
#include "ketch/types/image_type.h"

namespace ketch {

arrow::Status RegisterBuiltins() {
  static std::once_flag once;
  static arrow::Status status;
  std::call_once(once, [] {
    status = arrow::compute::Initialize();
    if (status.ok()) status = RegisterExtensionTypes();
    if (status.ok()) status = image::RegisterImageFunctions();
    if (status.ok()) status = url::RegisterUrlFunctions();
    if (status.ok()) status = embedding::RegisterEmbeddingFunctions();
    if (status.ok()) status = file::RegisterFileFunctions();
    if (status.ok()) status = str::RegisterStringFunctions();
    if (status.ok()) status = math::RegisterMathFunctions();
    if (status.ok()) status = temporal::RegisterTemporalFunctions();
    if (status.ok()) status = nested::RegisterNestedFunctions();
    if (status.ok()) status = random::RegisterRandomFunctions();
    if (status.ok()) status = RegisterPerRowOptionFunction();
    if (status.ok()) status = codec::RegisterCodecFunctions();
    if (status.ok()) status = tokenize::RegisterTokenizeFunctions();
    if (status.ok()) status = partitioning::RegisterPartitioningFunctions();
    if (status.ok()) status = internal::RegisterInternalFunctions();
    if (status.ok()) status = media::RegisterAudioFunctions();
    if (status.ok()) status = media::RegisterVideoFunctions();
    if (status.ok()) status = pdf::RegisterPdfFunctions();
    if (status.ok()) status = media::RegisterMediaDecodeFunction();
  });
  return status;
}

}  // namespace ketch
