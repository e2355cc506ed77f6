// Multimodal extension types for Python (ketch.DataType.image(...)).

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "interop.h"
#include "ketch/types/file_type.h"
#include "ketch/types/image_type.h"

namespace ketch::bindings {

void BindTypes(nb::module_& m) {
  m.def(
      "image_type",
      [](std::optional<std::string> mode, std::optional<int32_t> height, std::optional<int32_t> width) {
        std::optional<ImageMode> parsed;
        if (mode) parsed = Unwrap(ParseMode(*mode));
        if (height || width) {
          if (!parsed || !height || !width || *height <= 0 || *width <= 0) {
            RaiseStatus(arrow::Status::Invalid("a fixed-shape image needs mode, height > 0 and width > 0"));
          }
          return TypeToPy(fixed_shape_image_type(*parsed, *height, *width));
        }
        return TypeToPy(image_type(parsed));
      },
      nb::arg("mode").none() = nb::none(), nb::arg("height").none() = nb::none(),
      nb::arg("width").none() = nb::none());

  m.def(
      "file_type", [](const std::string& media) { return TypeToPy(file_type(media)); },
      nb::arg("media") = "");
  // The media type of a File type: "" (any file), "audio" or "video".
  m.def("file_media", [](nb::handle py_type) {
    auto type = TypeFromPy(py_type);
    if (!IsFileType(*type)) RaiseStatus(arrow::Status::TypeError(type->ToString(), " is not a File type"));
    return static_cast<const FileType&>(*type).media();
  });

  // (mode or None, height or None, width or None) of an Image / FixedShapeImage type.
  m.def("image_type_info", [](nb::handle py_type) {
    auto type = TypeFromPy(py_type);
    if (!IsImageType(*type)) RaiseStatus(arrow::Status::TypeError(type->ToString(), " is not an image type"));
    const auto& ext = static_cast<const arrow::ExtensionType&>(*type);
    if (ext.extension_name() == "ketch.fixed_shape_image") {
      const auto& fixed = static_cast<const FixedShapeImageType&>(*type);
      return nb::make_tuple(ModeName(fixed.mode()), fixed.height(), fixed.width());
    }
    auto mode = static_cast<const ImageType&>(*type).mode();
    return nb::make_tuple(mode ? nb::cast(ModeName(*mode)) : nb::none(), nb::none(), nb::none());
  });
}

}  // namespace ketch::bindings
