# find_package(aperture): the imported target aperture::aperture, the
# policy's library with its header and gRPC's C core.
# Installed as <prefix>/lib/<multiarch>/cmake/aperture/; every path is
# taken relative to this file, so a package unpacked anywhere (dpkg -x)
# works as well as an installed one.
if(TARGET aperture::aperture)
  return()
endif()

get_filename_component(_aperture_libdir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
get_filename_component(_aperture_prefix "${_aperture_libdir}/../.." ABSOLUTE)
foreach(_aperture_file IN ITEMS "${_aperture_libdir}/libaperture.so"
                                "${_aperture_prefix}/include/aperture.h")
  if(NOT EXISTS "${_aperture_file}")
    set(aperture_FOUND FALSE)
    set(aperture_NOT_FOUND_MESSAGE "${_aperture_file} is missing")
    return()
  endif()
endforeach()

# gRPC's C core, found as aperture.pc finds it (Requires: grpc): through
# pkg-config's modules grpc and gpr (libgrpc-dev, which depends on
# pkg-config; Debian's gRPCConfig.cmake would also want gRPC's C++
# libraries and plugins). A program links libgrpc and libgpr; what they
# need comes with them as shared libraries.
include(CMakeFindDependencyMacro)
find_dependency(PkgConfig)
pkg_check_modules(_aperture_grpc QUIET grpc gpr)
if(_aperture_grpc_FOUND)
  find_library(APERTURE_GRPC_LIBRARY grpc HINTS ${_aperture_grpc_LIBRARY_DIRS})
  find_library(APERTURE_GPR_LIBRARY gpr HINTS ${_aperture_grpc_LIBRARY_DIRS})
  mark_as_advanced(APERTURE_GRPC_LIBRARY APERTURE_GPR_LIBRARY)
endif()
if(NOT _aperture_grpc_FOUND OR NOT APERTURE_GRPC_LIBRARY OR NOT APERTURE_GPR_LIBRARY)
  set(aperture_FOUND FALSE)
  set(aperture_NOT_FOUND_MESSAGE
      "gRPC's C core (pkg-config modules grpc and gpr, libgrpc and libgpr) not found: install libgrpc-dev")
  return()
endif()

set(_aperture_includes "${_aperture_prefix}/include" ${_aperture_grpc_INCLUDE_DIRS})
add_library(aperture::aperture SHARED IMPORTED)
# The library has no SONAME: linking it by -laperture, not by its path,
# keeps that path out of the program's NEEDED entries.
set_target_properties(aperture::aperture PROPERTIES
  IMPORTED_LOCATION "${_aperture_libdir}/libaperture.so"
  IMPORTED_NO_SONAME TRUE
  INTERFACE_INCLUDE_DIRECTORIES "${_aperture_includes}"
  INTERFACE_LINK_LIBRARIES "${APERTURE_GRPC_LIBRARY};${APERTURE_GPR_LIBRARY}")

unset(_aperture_file)
unset(_aperture_includes)
unset(_aperture_libdir)
unset(_aperture_prefix)
