# CMake toolchain: 64-bit ARM Linux (aarch64-linux-gnu), for Raspberry Pi 3/4/5
# running a 64-bit OS and generic arm64 gateways.
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=board/toolchains/aarch64-linux-gnu.cmake
#
# Two ways to find the target's librdkafka, cJSON and SQLite:
#  - Debian/Ubuntu multiarch (default): the :arm64 -dev packages installed on
#    the build host (dpkg --add-architecture arm64; board/cross-build.sh does it).
#  - A sysroot (a board SDK, or a copy of the device's / with the -dev
#    packages): -DSKIFF_SYSROOT=/path/to/sysroot.
#
# -DSKIFF_CPU=cortex-a72 builds with -mcpu=cortex-a72 for one board; empty (the
# default) builds plain -march=armv8-a, which runs on every arm64 board.
# See board/<board>/board.conf.
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
skiff_cross_toolchain(aarch64 aarch64-linux-gnu "-march=armv8-a" "")
