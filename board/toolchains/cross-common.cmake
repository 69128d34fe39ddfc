# Shared by the toolchain files in this directory: a GNU cross compiler named
# <triplet>-gcc, and the target's libraries either from Debian multiarch
# (/usr/lib/<triplet>) or from a sysroot (SKIFF_SYSROOT).
#
# Cache variables an integrator may set:
#   SKIFF_CROSS_PREFIX  compiler prefix (default "<triplet>-"), e.g. a full path
#                       to an SDK's bin/aarch64-none-linux-gnu-
#   SKIFF_SYSROOT       target root filesystem with headers and libraries
#   SKIFF_CPU           value of -mcpu (e.g. cortex-a72), which then replaces
#                       the -march baseline; empty: the baseline
#   SKIFF_ARCH_FLAGS    the -march baseline (runs on every board of the family)
#   SKIFF_ABI_FLAGS     ABI flags that always apply (32-bit ARM: FPU, float ABI)
#
# A toolchain file is read again for every try_compile, where cache values are
# not visible: CMAKE_TRY_COMPILE_PLATFORM_VARIABLES carries them over.

macro(skiff_cross_toolchain processor triplet march abi)
  set(CMAKE_SYSTEM_NAME Linux)
  set(CMAKE_SYSTEM_PROCESSOR ${processor})
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
       SKIFF_CROSS_PREFIX SKIFF_SYSROOT SKIFF_CPU SKIFF_ARCH_FLAGS SKIFF_ABI_FLAGS)

  set(SKIFF_CROSS_PREFIX "${triplet}-" CACHE STRING "cross compiler prefix")
  set(SKIFF_SYSROOT "" CACHE PATH "target sysroot; empty: Debian multiarch")
  set(SKIFF_CPU "" CACHE STRING "-mcpu value for the target board; empty: -march baseline")
  set(SKIFF_ARCH_FLAGS "${march}" CACHE STRING "architecture baseline flags")
  set(SKIFF_ABI_FLAGS "${abi}" CACHE STRING "ABI flags (FPU, float ABI)")

  set(CMAKE_C_COMPILER ${SKIFF_CROSS_PREFIX}gcc)
  set(CMAKE_CXX_COMPILER ${SKIFF_CROSS_PREFIX}g++)
  # Without the prefix, CMake would pick the host's strip for `cmake --install --strip`.
  set(CMAKE_STRIP ${SKIFF_CROSS_PREFIX}strip CACHE FILEPATH "")

  # -mcpu names the architecture too; with a -march beside it GCC warns
  # about the conflict whenever the two differ.
  if(SKIFF_CPU)
    set(_skiff_flags "-mcpu=${SKIFF_CPU} ${SKIFF_ABI_FLAGS}")
  else()
    set(_skiff_flags "${SKIFF_ARCH_FLAGS} ${SKIFF_ABI_FLAGS}")
  endif()
  set(CMAKE_C_FLAGS_INIT "${_skiff_flags}")
  set(CMAKE_CXX_FLAGS_INIT "${_skiff_flags}")

  if(SKIFF_SYSROOT)
    set(CMAKE_SYSROOT "${SKIFF_SYSROOT}")
    set(CMAKE_FIND_ROOT_PATH "${SKIFF_SYSROOT}")
    set(ENV{PKG_CONFIG_SYSROOT_DIR} "${SKIFF_SYSROOT}")
    set(ENV{PKG_CONFIG_LIBDIR}
        "${SKIFF_SYSROOT}/usr/lib/${triplet}/pkgconfig:${SKIFF_SYSROOT}/usr/lib/pkgconfig:${SKIFF_SYSROOT}/usr/share/pkgconfig")
  else()
    # Debian multiarch: the target's libraries sit beside the host's, in
    # /usr/lib/<triplet>, and Debian's cross gcc already searches there.
    set(CMAKE_LIBRARY_ARCHITECTURE ${triplet})
    set(CMAKE_FIND_ROOT_PATH /usr/${triplet})
    set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${triplet}/pkgconfig:/usr/share/pkgconfig")
  endif()
  # Only the target's .pc files: a host PKG_CONFIG_PATH would leak x86 paths.
  unset(ENV{PKG_CONFIG_PATH})

  # Programs run on the build host; libraries and headers come from the target.
  # BOTH (not ONLY) for libraries in multiarch mode: /usr/lib/<triplet> is
  # outside CMAKE_FIND_ROOT_PATH, and CMAKE_LIBRARY_ARCHITECTURE keeps the
  # search in the target's directory first.
  set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
  if(SKIFF_SYSROOT)
    set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
    set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
    set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
  else()
    set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
    set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
    set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
  endif()

  # Lets ctest run the unit tests under qemu-user when it is installed.
  # Multiarch: no -L, so the target's multiarch loader (/lib/ld-linux-*) loads
  # the multiarch glibc the libraries were built with; -L /usr/<triplet> would
  # mix in the cross toolchain's glibc (librdkafka then spins). A sysroot
  # holds its own loader and glibc: -L SYSROOT.
  if("${processor}" STREQUAL "aarch64")
    set(_skiff_qemu qemu-aarch64)
  else()
    set(_skiff_qemu qemu-arm)
  endif()
  find_program(SKIFF_QEMU ${_skiff_qemu})
  if(SKIFF_QEMU AND NOT SKIFF_SYSROOT)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${SKIFF_QEMU})
  elseif(SKIFF_QEMU)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${SKIFF_QEMU} -L ${SKIFF_SYSROOT})
  endif()
endmacro()
