#!/usr/bin/env bash
# The .deb, installed: builds the package with cpack from this build, unpacks it into an empty
# root (dpkg -x: nothing touches the host), checks what it holds, then runs the installed
# rgpud with the installed config and lists its devices with clinfo through the installed
# vendors file and ICD.
#
#   package_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
dir=$(mktemp -d /tmp/rgpu-pkg.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/rgpud.log" ] && tail -n 20 "$dir/rgpud.log"; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$dir/pkg" >"$dir/cpack.log" 2>&1 || { cat "$dir/cpack.log"; fail "cpack"; }
deb=$(ls "$dir"/pkg/rgpu_*.deb) || fail "no .deb made"
echo "package: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
root="$dir/root"
dpkg -x "$deb" "$root" || fail "dpkg -x"
for f in usr/bin/rgpud usr/bin/rgpu usr/lib/librgpu-icd.so etc/OpenCL/vendors/rgpu.icd \
         etc/rgpu/rgpud.toml usr/lib/systemd/system/rgpud.service usr/share/doc/rgpu/rgpud.example.toml; do
  [ -e "$root/$f" ] || fail "the package lacks /$f"
done
dpkg-deb -f "$deb" Depends | grep -q libcurl4 || fail "Depends misses libcurl4"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/rgpu/rgpud.toml || fail "config is not a conffile"
unit="$root/usr/lib/systemd/system/rgpud.service"
for key in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
           'ExecStart=rgpud --config /etc/rgpu/rgpud.toml'; do
  grep -qx "$key" "$unit" || fail "unit lacks $key"
done
grep -q '^ExecReload' "$unit" && fail "unit has ExecReload but rgpud cannot reload its config"

# The installed daemon with the installed config (its listen address moved to a private socket,
# so that tests running beside this one do not collide on 127.0.0.1:7420).
export LD_LIBRARY_PATH="$root/usr/lib"
"$root/usr/bin/rgpud" --config "$root/etc/rgpu/rgpud.toml" --listen "unix:$dir/rgpud.sock" >"$dir/rgpud.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/rgpud.log" && break; sleep 0.05; done
grep -q "listening on" "$dir/rgpud.log" || fail "installed rgpud did not start"
export OCL_ICD_VENDORS="$root/etc/OpenCL/vendors" RGPU_SERVER="unix:$dir/rgpud.sock"
out=$(clinfo -l) || fail "clinfo failed"
echo "$out"
echo "$out" | grep -q 'Platform #0: rgpu' || fail "clinfo does not see the installed rgpu platform"
echo "$out" | grep -q 'Device #0' || fail "clinfo lists no device through the installed ICD"
"$root/usr/bin/rgpu" status --server "unix:$dir/rgpud.sock" >/dev/null || fail "installed rgpu status failed"
kill -TERM $pid
wait $pid || fail "installed rgpud did not stop cleanly"
pid=
echo PASS
