# CMake toolchain: 32-bit ARM Linux, hard float (arm-linux-gnueabihf), for
# Raspberry Pi 2/3/4/Zero 2 W running a 32-bit (armhf) OS, and armv7 gateways.
#
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=board/toolchains/arm-linux-gnueabihf.cmake
#
# Debian's armhf baseline is ARMv7-A + VFPv3-D16 + Thumb-2, the default here.
# It does NOT run on ARMv6 boards (Raspberry Pi 1, Zero, Zero W): for those,
# build against a Raspberry Pi OS sysroot (-DSKIFF_SYSROOT=...) with
# -DSKIFF_ARCH_FLAGS=-march=armv6kz -DSKIFF_ABI_FLAGS="-mfpu=vfp -mfloat-abi=hard -marm".
#
# Library lookup (multiarch or -DSKIFF_SYSROOT) and -DSKIFF_CPU as in
# aarch64-linux-gnu.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
skiff_cross_toolchain(arm arm-linux-gnueabihf "-march=armv7-a" "-mfpu=vfpv3-d16 -mfloat-abi=hard -mthumb")
