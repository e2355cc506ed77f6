# Before any find_* call: every header and tool the build needs, checked at once, so a machine
# without them gets one message that lists the missing Debian packages and the command that
# installs them (deps/apt.txt is the whole list; `make demo` / `make test` run deps/install.sh).
set(_ketch_needs
    "png.h=libpng-dev" "jpeglib.h=libjpeg62-turbo-dev" "turbojpeg.h=libturbojpeg0-dev"
    "webp/decode.h=libwebp-dev" "tiffio.h=libtiff-dev" "gif_lib.h=libgif-dev"
    "curl/curl.h=libcurl4-openssl-dev" "stb/stb_image.h=libstb-dev" "openssl/sha.h=libssl-dev"
    "xxhash.h=libxxhash-dev" "jq.h=libjq-dev" "pcre2.h=libpcre2-dev" "re2/re2.h=libre2-dev"
    "flatbuffers/flatbuffers.h=libflatbuffers-dev" "libavformat/avformat.h=libavformat-dev"
    "libavcodec/avcodec.h=libavcodec-dev" "libavutil/avutil.h=libavutil-dev"
    "libswresample/swresample.h=libswresample-dev" "libswscale/swscale.h=libswscale-dev")
if(KETCH_BUILD_TESTS AND NOT SKBUILD)
  list(APPEND _ketch_needs "gtest/gtest.h=libgtest-dev")
endif()
set(_ketch_missing "")
foreach(_need IN LISTS _ketch_needs)
  string(REPLACE "=" ";" _pair "${_need}")
  list(GET _pair 0 _header)
  list(GET _pair 1 _package)
  string(MAKE_C_IDENTIFIER "KETCH_HAVE_${_header}" _var)
  find_path(${_var} "${_header}" PATHS /usr/include/x86_64-linux-gnu /usr/include/stb)
  if(NOT ${_var})
    list(APPEND _ketch_missing "${_package}")
  endif()
endforeach()
foreach(_tool_pair "pkg-config=pkg-config" "flatc=flatbuffers-compiler")
  string(REPLACE "=" ";" _pair "${_tool_pair}")
  list(GET _pair 0 _tool)
  list(GET _pair 1 _package)
  string(MAKE_C_IDENTIFIER "KETCH_TOOL_${_tool}" _var)
  find_program(${_var} "${_tool}")
  if(NOT ${_var})
    list(APPEND _ketch_missing "${_package}")
  endif()
endforeach()
if(_ketch_missing)
  list(JOIN _ketch_missing " " _ketch_missing_text)
  message(FATAL_ERROR
    "Ketch's build needs Debian packages that are missing: ${_ketch_missing_text}\n"
    "Install them with: sudo apt-get install ${_ketch_missing_text}\n"
    "(deps/apt.txt lists everything the build needs; `make demo` and `make test` install it.)\n"
    "To install Ketch without building it, use the wheel (README: Install).")
endif()
