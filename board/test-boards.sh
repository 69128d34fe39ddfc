#!/usr/bin/env bash
# test-boards.sh: the board profile of scripts/test.sh (--boards). For arm64
# (raspberrypi-arm64) and armhf (raspberrypi-armhf): the cross build against a
# sysroot of the target's .debs, the unit tests and the end-to-end subset
# (board/e2e-qemu.sh) under qemu-user, the .deb; then the amd64, arm64 and
# armhf .debs each installed into a fresh root (firmware/debian/test-install.sh).
# Build directories: build-boards-{amd64,arm64,armhf}. About 5 minutes on 2 cores,
# and 6-12 more for each foreign install where binfmt_misc runs its maintainer
# scripts under qemu (test-install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

echo "== boards: host tools and the amd64 package (RelWithDebInfo)"
cmake -S . -B build-boards-amd64 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-boards-amd64 -j"$(nproc)" --target skiff consume >/dev/null
debs=("$(SKIFF_DEB_OUT=build-boards-amd64/deb firmware/debian/build-deb.sh build-boards-amd64 2>/dev/null)")

for board in raspberrypi-arm64 raspberrypi-armhf; do
	arch=${board#raspberrypi-}
	echo "== boards: $board (unit tests, end-to-end under qemu, .deb)"
	log=build-boards-$arch/cross-build.log
	mkdir -p "build-boards-$arch"
	SKIFF_TOOLS=$src/build-boards-amd64 SKIFF_DEB_OUT=$src/build-boards-$arch/deb \
		board/cross-build.sh --sysroot --test --e2e --deb -B "build-boards-$arch" "$board" \
		>"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		echo "test-boards: $board failed (log: $log)" >&2
		exit 1
	}
	grep -E '^cross-build: size|tests passed|passed|failed' "$log" || true
	debs+=("$(ls "build-boards-$arch/deb/"skiff_*_"$arch".deb)")
done

for deb in "${debs[@]}"; do
	echo "== boards: install $(basename "$deb") into a fresh root"
	firmware/debian/test-install.sh "$deb"
done
echo "test-boards: 3 passed, 0 failed"
