// Multimodal extension types for Python (ketch.DataType.image(...)).

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "interop.h"
#include "ketch/types/image_type.h"

namespace ketch::bindings {

void BindTypes(nb::module_& m) {
  m.def("image_type", [](std::optional<std::string> mode, std::optional<int32_t> height,
                         std::optional<int32_t> width) {
    std::optional<ImageMode> parsed;
    if (mode) parsed = Unwrap(ParseMode(*mode));
    if (height || width) {
      if (!parsed || !height || !width || *height <= 0 || *width <= 0) {
        RaiseStatus(arrow::Status::Invalid("a fixed-shape image needs mode, height > 0 and width > 0"));
      }
      return TypeToPy(fixed_shape_image_type(*parsed, *height, *width));
    }
    return TypeToPy(image_type(parsed));
  }, nb::arg("mode").none() = nb::none(), nb::arg("height").none() = nb::none(), nb::arg("width").none() = nb::none());
}

}  // namespace ketch::bindings
